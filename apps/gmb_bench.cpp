// SPDX-License-Identifier: BSD-3-Clause
// gmb-bench: the one driver. `gmb-bench list`, `gmb-bench <benchmark> [options]`.
#include <fcntl.h>
#include <mpi.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "gmb/benchmark.hpp"
#include "gmb/crash_report.hpp"
#include "gmb/description.hpp"
#include "gmb/error.hpp"
#include "gmb/mpi_library.hpp"
#include "gmb/placement.hpp"
#include "gmb/plan.hpp"
#include "gmb/platform.hpp"
#include "gmb/provenance.hpp"
#include "gmb/sizes.hpp"
#include "gmb/stdout_reader.hpp"

using namespace gmb;

namespace {

// Where docs/omb.md is: the copy `cmake --install` put beside this program (<prefix>/bin/../share/doc/gmb/docs), else
// the source's.
std::string omb_doc_location() {
  std::error_code error;
  const std::filesystem::path program = std::filesystem::read_symlink("/proc/self/exe", error);
  const std::filesystem::path installed = program.parent_path().parent_path() / GMB_INSTALLED_DOCS / "omb.md";
  if (!error && std::filesystem::is_regular_file(installed, error)) return installed.string();
  return "docs/omb.md in gmb's source";
}

std::vector<const BenchmarkInfo*> benchmarks_by_name() {
  std::vector<const BenchmarkInfo*> sorted;
  for (const auto& b : Registry::instance().all()) sorted.push_back(&b);
  std::sort(sorted.begin(), sorted.end(), [](const auto* a, const auto* b) { return a->name < b->name; });
  return sorted;
}

// The benchmarks by name, one a line, their summaries in one column.
std::string benchmark_lines() {
  const std::vector<const BenchmarkInfo*> benchmarks = benchmarks_by_name();
  std::size_t width = 0;
  for (const auto* b : benchmarks) width = std::max(width, b->name.size());
  std::string lines;
  for (const auto* b : benchmarks)
    lines += "  " + b->name + std::string(width + 2 - b->name.size(), ' ') + b->summary + "\n";
  return lines;
}

void print_usage() {
  std::printf("usage: gmb-bench list [--format table|json]\n"
              "       gmb-bench --version\n"
              "       gmb-bench <benchmark> [options]     (launched with mpirun/mpiexec/srun)\n"
              "       gmb-bench plan PLAN --status FILE   (a plan's benchmarks in one launch)\n"
              "       gmb-bench <benchmark> --help\n\nbenchmarks:\n");
  std::printf("%s", benchmark_lines().c_str());
  std::printf("\nexit status: 0 ok, 1 runtime failure, 2 bad input, 3 unsupported configuration, 4 validation failed\n");
}

std::string first_line(const std::string& text) {
  const std::size_t start = text.find_first_not_of(" \n");
  if (start == std::string::npos) return "";
  return text.substr(start, text.find('\n', start) - start);
}

ArgParser described_common_options();

int list_command(const std::vector<std::string>& args) {
  bool json = false;
  ArgParser parser;
  parser.value({"--format"}, "table|json", "output format", [&](const std::string& v) {
    json = parse_choice(v, {"table", "json"}, "format") == "json";
  });
  parser.parse(args);
  Platform platform;
  register_modules(platform);
  const BuildInfo& build = build_info();
  if (json) {
    std::printf("%s\n", engine_description(platform, described_common_options()).dump().c_str());
    return kExitOk;
  }
  std::printf("gmb-bench %s (%s), CUDA module: %s, NCCL transport: %s\n", build.version.c_str(),
              build.git_revision.c_str(), build.cuda ? "built" : "not built",
              platform.nccl.available() ? ("NCCL " + platform.nccl.version).c_str()
                                        : ("unavailable: " + platform.nccl.unavailable_reason).c_str());
  const MpiLibraryObject mpi = loaded_mpi_library();
  std::printf("MPI library: %s\n  loaded %s\n  built against %s%s\n", first_line(mpi_library_version_text()).c_str(),
              mpi.loaded.empty() ? ("unknown: " + mpi.lookup_error).c_str() : mpi.loaded.c_str(), mpi.linked.c_str(),
              mpi.mismatch().empty() ? "" : ("\n  WARNING: " + mpi.mismatch()).c_str());
  if (build.cuda && !platform.gpu_unavailable_reason.empty())
    std::printf("GPU: %s: the GPU memory kinds are unavailable, the rest is listed below\n",
                platform.gpu_unavailable_reason.c_str());
  std::printf("\nbenchmarks:\n%s", benchmark_lines().c_str());
  std::printf("\nmemory kinds:\n");
  for (const auto& k : platform.memory.all()) {
    // The GPU's reason is said once above.
    const std::string why = k.unavailable_reason == platform.gpu_unavailable_reason ? "no usable GPU (above)"
                                                                                    : k.unavailable_reason;
    std::printf("  %-10s %-45s %s\n", k.name.c_str(), k.description.c_str(),
                k.available() ? "available" : ("unavailable: " + why).c_str());
  }
  std::printf("\nmanaged memory takes a placement: managed:host or managed:device (where it is when MPI is called)\n");
  return kExitOk;
}

// What OMB's spellings asked for (docs/omb.md), read once the benchmark is known (apply_omb_options).
struct OmbOptions {
  std::string message_size;      // -m / --message-size, as given
  std::string accelerator;       // -d / --accelerator: "cuda" or "managed"
  bool full = false;             // bare -f / --full
  int iterations = 0;            // -i / --iterations: every size (0: not given)
  int warmup = -1;               // -x: every size (-1: not given)
  bool iters_large_given = false, warmup_large_given = false;
};

// Options every benchmark shares, gmb's long names and OMB's letters (with OMB's meaning: docs/omb.md).
void add_common_options(ArgParser& parser, RunSettings& s, OmbOptions& omb, bool& help) {
  parser.value({"--sizes"}, "SIZES", "message sizes: MIN:MAX (doubling), a list 1,8,4K (each size once), or one size; K/M/G suffixes",
               [&](const std::string& v) { s.sizes = parse_sizes(v); });
  parser.value({"-m", "--message-size"}, "[MIN:]MAX",
               "OMB's message sizes: MAX from OMB's minimum for this benchmark, MIN:MAX, MIN: up to OMB's maximum "
               "(4M point to point, 1M collectives), :MAX; doubling steps",
               [&](const std::string& v) {
                 if (v.empty()) throw UsageError("empty message size (accepted: [MIN:]MAX, e.g. 4194304 or 2:)");
                 omb.message_size = v;
               });
  parser.value({"--iters"}, "N", "timed iterations per size below --large-size (default 1000)",
               [&](const std::string& v) { s.iters = parse_positive_int(v, "iteration count"); });
  parser.value({"-i", "--iterations"}, "N", "OMB's iterations: timed iterations at every size (--iters and --iters-large)",
               [&](const std::string& v) { s.iters = omb.iterations = parse_positive_int(v, "iteration count"); });
  parser.value({"--warmup"}, "N", "warm-up iterations per size below --large-size (default 100)",
               [&](const std::string& v) { s.warmup = parse_nonnegative_int(v, "warm-up count"); });
  parser.value({"-x"}, "N", "OMB's warm-up: warm-up iterations at every size (--warmup and --warmup-large)",
               [&](const std::string& v) { s.warmup = omb.warmup = parse_nonnegative_int(v, "warm-up count"); });
  parser.value({"--iters-large"}, "N", "timed iterations for sizes >= --large-size (default 100)",
               [&](const std::string& v) {
                 s.iters_large = parse_positive_int(v, "iteration count");
                 omb.iters_large_given = true;
               });
  parser.value({"--warmup-large"}, "N", "warm-up iterations for sizes >= --large-size (default 10)",
               [&](const std::string& v) {
                 s.warmup_large = parse_nonnegative_int(v, "warm-up count");
                 omb.warmup_large_given = true;
               });
  parser.value({"--large-size"}, "BYTES", "where large-message counts start (default 1M)",
               [&](const std::string& v) { s.large_size = parse_size(v); });
  parser.value({"--batch"}, "N", "iterations per timed sample, each sample after a barrier (default: automatic, samples of >= 200 us)",
               [&](const std::string& v) { s.batch = parse_positive_int(v, "batch"); });
  parser.flag({"--validate", "-c", "--validation"},
              "check every received byte (device buffers too) of extra, untimed iterations before and after the timed "
              "ones; a mismatch fails the run",
              &s.validate);
  parser.flag({"--fresh-buffers"},
              "stress mode: allocate buffers for every size and free them after it (default: once per launch, reused "
              "across sizes, as applications do)",
              &s.fresh_buffers);
  parser.value({"--memory-limit", "-M", "--mem-limit"}, "BYTES",
               "the most memory (host and device together) one rank may use for a size, e.g. 512M; sizes needing more "
               "are recorded unsupported, as are sizes over what the host or GPU has available (default: that alone)",
               [&](const std::string& v) {
                 s.memory_limit = parse_size(v);
                 if (s.memory_limit == 0) throw UsageError("bad memory limit '" + v + "' (accepted: at least 1 byte, e.g. 512M)");
               });
  add_precision_options(parser, s);
  parser.value({"--nic"}, "nearest|NAME[,NAME...]|none",
               "the network card each local rank's MPI library and NCCL use: the one nearest its GPU in the PCIe tree "
               "(ties spread by local rank), or the NAMEs (interfaces or RDMA devices) by local rank modulo their "
               "number; set through UCX_NET_DEVICES, OMPI_MCA_btl_tcp_if_include, FI_TCP_IFACE, NCCL_IB_HCA or "
               "NCCL_SOCKET_IFNAME before MPI_Init wherever the user has not set them (default none: the library's "
               "own choice)",
               [&](const std::string& v) { s.nic = parse_nic_request(v); });
  parser.value({"--out", "-o"}, "FILE.jsonl", "write records to FILE (never overwrites an existing file)",
               [&](const std::string& v) {
                 if (v.empty()) throw UsageError("empty file name");
                 s.out_path = v;
               });
  auto set_format = [&](const std::string& v) {
    s.format = parse_choice(v, {"table", "json"}, "format") == "json" ? StdoutFormat::json : StdoutFormat::table;
  };
  parser.value({"--format"}, "table|json", "stdout: a human table (default) or the JSON records", set_format);
  parser.optional_value({"-f"}, "table|json",
                        "-f table / -f json: --format; a bare -f: OMB's full statistics (the table adds min, max and "
                        "iterations)",
                        [](const std::string& next) { return next == "table" || next == "json"; },
                        [&, set_format](const std::string& v) {
                          if (v.empty()) omb.full = true;
                          else set_format(v);
                        });
  parser.flag({"--full"}, "OMB's full statistics: the table adds min, max and iterations", &omb.full);
  parser.value({"-d", "--accelerator"}, "cuda|managed",
               "OMB's accelerator: point to point, the buffer letters (D, MH, MD) place the buffers and -d names "
               "the API (without letters both sides stay host, as OMB); coll, nbc: every rank's buffers device "
               "(cuda) or managed",
               [&](const std::string& v) { omb.accelerator = parse_omb_accelerator(v); });
  parser.flag({"--help", "-h"}, "show this help", &help);
}

// The options every benchmark takes, as the engine's description lists them (nothing is parsed: the values they
// would set live as long as the parser).
ArgParser described_common_options() {
  static RunSettings settings;
  static OmbOptions omb;
  static bool help = false;
  ArgParser parser;
  add_common_options(parser, settings, omb, help);
  return parser;
}

// Reads OMB's spellings once the benchmark and its positionals are known: settles sizes, counts and memory
// (the collectives' --mem through the benchmark's own option), and returns the lines rank 0 says on stderr
// (how an OMB option was read where gmb would read it otherwise). Fills `reading` with what the context
// records. Throws UsageError.
std::vector<std::string> apply_omb_options(const BenchmarkInfo& info, const ArgParser& parser, const OmbOptions& omb,
                                           const std::vector<std::string>& positionals, RunSettings& settings,
                                           Json& reading) {
  std::vector<std::string> warnings;
  const auto& counterpart = info.omb;
  if (!omb.message_size.empty()) {
    if (!counterpart)
      throw UsageError("-m is OMB's --message-size, and " + info.name + " has no OMB counterpart: give --sizes");
    if (parser.given("--sizes"))
      throw UsageError("give either -m (OMB's [MIN:]MAX) or --sizes (gmb's sizes), not both");
    OmbMessageSizes m;
    try {
      m = parse_omb_message_sizes(omb.message_size, *counterpart);
    } catch (const UsageError& e) {
      throw UsageError(std::string("-m: ") + e.what());
    }
    settings.sizes = m.sizes;
    reading.set("message_size", "-m " + omb.message_size + ": " + m.reading + ", as in " + counterpart->program);
    if (!m.warning.empty()) warnings.push_back(m.warning);
  }
  // OMB's -i and -x set the small- and the large-message counts alike; an explicit --iters-large/--warmup-large stays.
  if (omb.iterations > 0 && !omb.iters_large_given) settings.iters_large = omb.iterations;
  if (omb.warmup >= 0 && !omb.warmup_large_given) settings.warmup_large = omb.warmup;
  if (omb.full) reading.set("full", true);
  if (!omb.accelerator.empty()) {
    if (!counterpart)
      throw UsageError("-d is OMB's --accelerator, and " + info.name + " has no OMB counterpart: give --mem");
    reading.set("accelerator", omb.accelerator);
    if (counterpart->collective) {
      // OMB allocates every collective buffer with the accelerator's allocator: cudaMalloc, cudaMallocManaged.
      if (parser.given("--mem"))
        throw UsageError("-d " + omb.accelerator + " and --mem both set every rank's memory: give one");
      parser.apply("--mem", omb.accelerator == "cuda" ? "device" : "managed");
    } else {
      const std::string line = omb_pt2pt_accelerator_warning(omb.accelerator, counterpart->program, positionals,
                                                             parser.given("--send") || parser.given("--recv") ||
                                                                 !counterpart->host_by_default);
      if (!line.empty()) warnings.push_back(line);
    }
  }
  return warnings;
}

// The statistic OMB's full listing (-f) gives the min and max of: the time (OMB's "Min/Max Latency"), the
// headline of the bandwidth benchmarks (OMB has no -f there).
std::optional<Statistic> full_statistic(const BenchmarkInfo& info) {
  if (info.records.family == Family::collective || info.records.family == Family::nbc) return Statistic::time_us;
  return info.records.headline;
}

// The table of OMB's full listing (-f): min and max of full_statistic and the timed iterations, each unless the
// benchmark's table has it already.
std::vector<TableColumn> full_columns(const BenchmarkInfo& info, std::vector<TableColumn> columns) {
  std::vector<TableColumn> extra;
  if (const auto statistic = full_statistic(info)) {
    const std::string stat = statistic_name(*statistic);
    const bool time = *statistic == Statistic::time_us;
    const std::string unit = time ? "us" : stat == "message_rate_Mps" ? "Mmsg/s" : "GB/s";
    extra.push_back({"min_" + unit, stat + ".min", time ? 2 : 3});
    extra.push_back({"max_" + unit, stat + ".max", time ? 2 : 3});
  }
  extra.push_back({"iterations", "iterations", 0});
  for (const auto& c : extra)
    if (std::none_of(columns.begin(), columns.end(), [&](const TableColumn& have) { return have.path == c.path; }))
      columns.push_back(c);
  return columns;
}

// "latency, bw, ...": the benchmarks that take --fresh-buffers.
std::string benchmarks_sweeping_pooled_buffers() {
  std::string names;
  for (const auto& b : Registry::instance().all())
    if (b.make()->sweeps_pooled_buffers()) names += (names.empty() ? "" : ", ") + b.name;
  return names;
}

// Chooses this process's GPU from the local rank before MPI_Init (some libraries bind their
// GPU context at initialisation).
void select_gpu(Platform& platform, const LocalRank& local) {
  if (!platform.gpu || local.rank < 0) return;
  std::string error;
  const int count = platform.gpu->device_count(&error);
  if (count > 0) platform.gpu->select_device(local.rank % count);
}

// The PCI address of the GPU select_gpu() chose ("" without one): the GPU --nic measures distances from.
std::string selected_gpu_pci(const Platform& platform) {
  std::string error;
  if (!platform.gpu || !platform.gpu_unavailable_reason.empty() || platform.gpu->device_count(&error) <= 0) return "";
  return platform.gpu->current_device().pci_bus_id;
}

// Said before MPI_Init, by the first rank of each host: a library swapped for another of the same soname
// may crash during initialisation, and this line is then the only explanation.
void warn_if_mpi_library_swapped(const LocalRank& local) {
  if (local.rank > 0) return;
  const std::string mismatch = loaded_mpi_library().mismatch();
  if (!mismatch.empty())
    std::fprintf(stderr, "gmb-bench: warning: MPI library swapped: %s (LD_LIBRARY_PATH=%s); figures belong to the "
                 "library running\n", mismatch.c_str(), std::getenv("LD_LIBRARY_PATH") ? std::getenv("LD_LIBRARY_PATH") : "");
}

// OMB's -f: what the full statistics are in gmb's records.
void note_full_statistics(RecordSink& sink, const BenchmarkInfo& info) {
  sink.note("full statistics (OMB's -f): min and max of the " +
            std::string(full_statistic(info) ? statistic_name(*full_statistic(info)) : "figures") +
            " samples and the timed iterations per size; OMB's average is the records' mean");
}

// Why the benchmark cannot run as asked on this many ranks (its own configuration, the rank count, --fresh-buffers,
// --precision), or "": known only once MPI tells the rank count, so every rank returns the same answer.
std::string configuration_problem(const BenchmarkInfo& info, Benchmark& bench, const std::vector<std::string>& positionals,
                                  const RunSettings& settings, int ranks, Platform& platform) {
  try {
    bench.configure(positionals, ranks, platform);
  } catch (const UsageError& e) {
    return e.what();
  }
  std::string problem = rank_count_problem(info, ranks);
  if (problem.empty() && settings.fresh_buffers && !bench.sweeps_pooled_buffers())
    problem = "--fresh-buffers: " + info.name +
              " does not sweep sizes over buffers it hands to MPI, so it has no per-size allocation to stress "
              "(accepted by: " + benchmarks_sweeping_pooled_buffers() + ")";
  if (problem.empty()) problem = precision_problem(info, bench, settings);
  return problem;
}

// One benchmark invocation, parsed: a launch's only one, or a block of a plan (plan.hpp). Bad input is kept in
// usage_error (said once MPI tells which rank says it), never thrown.
struct Block {
  const BenchmarkInfo* info = nullptr;
  std::vector<std::string> args;  // as given after the benchmark's name
  std::string id;                 // the plan's name for it ("" outside a plan)
  double deadline_s = 0;          // a plan's block: no size is begun after this many seconds (0: none)
  RunSettings settings;
  OmbOptions omb;
  bool help = false;
  std::string help_text;  // what --help prints
  std::unique_ptr<Benchmark> bench;
  std::vector<std::string> positionals, omb_warnings;
  Json omb_reading = Json::object();
  std::string usage_error;
};

Block parse_block(const BenchmarkInfo& info, const std::vector<std::string>& args) {
  Block block;
  block.info = &info;
  block.args = args;
  block.bench = info.make();
  block.settings.sizes = parse_sizes(block.bench->default_sizes());
  ArgParser parser;
  add_common_options(parser, block.settings, block.omb, block.help);
  block.bench->add_options(parser);
  add_omb_refusals(parser);
  try {
    refuse_nccl_tests_sizes(args);
    block.positionals = parser.parse(args);
    if (!block.help)
      block.omb_warnings =
          apply_omb_options(info, parser, block.omb, block.positionals, block.settings, block.omb_reading);
  } catch (const UsageError& e) {
    block.usage_error = e.what();
  }
  if (block.help) {
    const Positionals positionals = block.bench->positionals();
    const std::string usage = positionals.optional ? " [" + positionals.names + "]" : " " + positionals.names;
    block.help_text = "usage: mpirun -np N gmb-bench " + info.name + " [options]" +
                        (positionals.names.empty() ? "" : usage) + "\n" + info.summary + "\n\n" +
                        (positionals.names.empty() ? "" : positionals.names + ": " + positionals.meaning + "\n\n") +
                        "options:\n" + parser.help() + "\nOSU Micro-Benchmarks' letters mean what they mean in OMB (" +
                        omb_doc_location() + "); gmb's long names keep gmb's meaning.\n";
  }
  return block;
}

// "unknown benchmark 'NAME'", a near name, and what is accepted: `commands` (e.g. list), then every benchmark.
std::string unknown_benchmark(const std::string& name, std::vector<std::string> commands) {
  for (const auto* b : benchmarks_by_name()) commands.push_back(b->name);
  std::string accepted;
  for (const auto& c : commands) accepted += (accepted.empty() ? "" : ", ") + c;
  return "unknown benchmark '" + name + "'" + did_you_mean(name, commands) + " (accepted: " + accepted + ")";
}

// The benchmark named by a plan's block, or UsageError naming the line and the benchmarks accepted.
const BenchmarkInfo& plan_benchmark(const PlanBlock& block, const std::string& plan_path) {
  const BenchmarkInfo* info = Registry::instance().find(block.args.front());
  if (info) return *info;
  throw UsageError(plan_path + " line " + std::to_string(block.line) + ": " + unknown_benchmark(block.args.front(), {}));
}

// A plan's status file, written by rank 0: one JSON line a block once it has ended (its exit status, its wall time,
// whether its deadline stopped it), flushed at once, so that whoever watches the launch knows which blocks ended
// should the launch die in the next one. Opened with O_EXCL: an existing file is never written to.
class PlanStatus {
 public:
  explicit PlanStatus(const std::string& path) : path_(path) {
    if (path.empty()) return;
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0)
      throw UsageError("--status " + path + ": " + std::strerror(errno) +
                       (errno == EEXIST ? " (a status file is never overwritten: name a new one)" : ""));
    file_ = ::fdopen(fd, "w");
  }
  ~PlanStatus() {
    if (file_) std::fclose(file_);
  }
  PlanStatus(const PlanStatus&) = delete;
  PlanStatus& operator=(const PlanStatus&) = delete;

  void ended(const Block& block, int position, int exit_status, double wall_s, bool deadline_passed,
             const std::string& reason) {
    if (!file_) return;
    const Json line = Json::object()
                          .set("block", block.id)
                          .set("position", position)
                          .set("benchmark", block.info->name)
                          .set("exit_status", exit_status)
                          .set("wall_s", wall_s)
                          .set("deadline_passed", deadline_passed)
                          .set("reason", reason);
    if (std::fprintf(file_, "%s\n", line.dump().c_str()) < 0 || std::fflush(file_) != 0)
      end_job(kExitFailure, "error", "cannot write the plan's status file " + path_ + ": " + std::strerror(errno));
  }

 private:
  std::string path_;
  std::FILE* file_ = nullptr;
};

// Runs the blocks one after the other inside one MPI_Init: what a launch sets up once (the GPU, MPI, the GPU-awareness
// proof, every rank's facts, the kernel-launch cost, NCCL's communicators) serves them all; each block has its own
// records file, context and run id. The blocks take their buffers from the launch's one pool, as the sizes of one
// block do: memory a library has seen is never freed and allocated again mid-launch (a library that keeps what it
// learnt about an address, as UCX does with the memory-type cache off, would otherwise move data to stale mappings);
// a block with --fresh-buffers allocates its own, as asked. Outside a plan (one block, no status file) bad
// input ends the launch with exit status 2, and the launch's status is the block's; in a plan a block refused is
// said in the status file and the next one runs, and the launch exits 0 once every block has ended.
int run_blocks(std::vector<Block>& blocks, const std::vector<std::string>& argv_all, const std::string& status_path) {
  const bool plan = !status_path.empty();  // plan_command always names a status file; a launch of its own none
  Block& first = blocks.front();
  if (!plan && first.help) {
    std::printf("%s", first.help_text.c_str());
    return kExitOk;
  }

  Platform platform;
  register_modules(platform);
  LocalRank local = local_rank_from_environment();
  select_gpu(platform, local);
  warn_if_mpi_library_swapped(local);
  // Libraries read their device selection at initialisation; a request that cannot be honoured ends this process
  // here (UsageError, naming the host and local rank), before any peer waits for it. A plan's blocks share one.
  const Json nic_pinning = first.usage_error.empty()
                               ? apply_nic_request(first.settings.nic, local.rank, local.source, selected_gpu_pci(platform))
                               : Json();

  GMB_MPI_CHECK(MPI_Init(nullptr, nullptr));
  guard_stdout();  // again: MPICH's MPI_Init unbuffers stdout (each piece of a line would leave before any check)
  // Errors come back to us so that every failure is reported with host, rank and call.
  GMB_MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
  install_crash_report(where_am_i());
  set_crash_context((plan ? std::string("plan") : first.info->name) + " start-up (GPU awareness proof, rank facts)");
  Context ctx;
  GMB_MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &ctx.rank));
  GMB_MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &ctx.size));

  auto finish = [&](int code) {
    int worst = code;
    GMB_MPI_CHECK(MPI_Allreduce(&code, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD));
    platform.nccl.disconnect_all();
    // Every rank is past its last record here: a harness that asked for this line (GMB_ANNOUNCE_FINISH=1) and sees
    // it but no exit knows that the library hangs in MPI_Finalize, not the measurement.
    const char* announce = std::getenv("GMB_ANNOUNCE_FINISH");
    if (ctx.rank == 0 && announce && std::string(announce) == "1") {
      std::fprintf(stderr, "gmb-bench: finished (exit status %d); MPI_Finalize next\n", worst);
      std::fflush(stderr);
    }
    GMB_MPI_CHECK(MPI_Finalize());
    return worst;
  };
  auto refusal = [&](const Block& block, const std::string& message) {
    if (ctx.rank == 0)
      std::fprintf(stderr, "gmb-bench %s%s: error: %s\n", block.info->name.c_str(),
                   block.id.empty() ? "" : (" (block " + block.id + ")").c_str(), message.c_str());
  };

  std::unique_ptr<PlanStatus> status;
  std::string status_error;
  try {
    status = std::make_unique<PlanStatus>(ctx.rank == 0 ? status_path : "");
  } catch (const UsageError& e) {
    status_error = e.what();
  }
  status_error = agree_on_reason(MPI_COMM_WORLD, status_error);
  if (!status_error.empty()) {
    if (ctx.rank == 0) std::fprintf(stderr, "gmb-bench plan: error: %s\n", status_error.c_str());
    return finish(kExitUsage);
  }
  for (Block& block : blocks)
    if (block.usage_error.empty())
      block.usage_error = configuration_problem(*block.info, *block.bench, block.positionals, block.settings, ctx.size,
                                                platform);
  if (!plan && !first.usage_error.empty()) {
    refusal(first, first.usage_error);
    return finish(kExitUsage);
  }

  if (local.rank < 0) {
    local = local_rank_from_shared_memory_split(MPI_COMM_WORLD);
    select_gpu(platform, local);
  }
  BufferPool launch_buffers(BufferAllocation::once_per_launch);
  const AwarenessReport awareness = detect_gpu_awareness(MPI_COMM_WORLD, platform, launch_buffers);
  ctx.platform = &platform;
  ctx.awareness = &awareness;
  ctx.ranks = gather_rank_facts(MPI_COMM_WORLD, platform);
  ctx.launch_cost = measure_launch_cost(MPI_COMM_WORLD, platform, ctx.ranks, ctx.rank);
  ctx.nic_pinning = nic_pinning;
  const std::string launch_run_id = plan ? make_run_id(MPI_COMM_WORLD) : "";

  int launch_code = kExitOk;
  for (std::size_t k = 0; k < blocks.size(); ++k) {
    Block& block = blocks[k];
    const double started = MPI_Wtime();
    const int position = static_cast<int>(k) + 1;
    auto ended = [&](int code, const std::string& reason) {
      if (ctx.rank == 0) status->ended(block, position, code, MPI_Wtime() - started, ctx.deadline_passed, reason);
    };
    ctx.deadline_passed = false;
    if (block.help && block.usage_error.empty())
      block.usage_error = "--help in a plan's block (ask `gmb-bench " + block.info->name + " --help`)";
    if (!block.usage_error.empty()) {
      refusal(block, block.usage_error);
      ended(kExitUsage, block.usage_error);
      continue;
    }
    if (ctx.rank == 0)
      for (const auto& w : block.omb_warnings)
        std::fprintf(stderr, "gmb-bench %s: warning: %s\n", block.info->name.c_str(), w.c_str());
    // Rank 0 owns the output file; everyone learns whether it could be created.
    std::unique_ptr<RecordSink> sink;
    std::string sink_error;
    try {
      sink = std::make_unique<RecordSink>(ctx.rank == 0 ? block.settings.out_path : "",
                                          ctx.rank == 0 ? block.settings.format : StdoutFormat::none);
    } catch (const UsageError& e) {
      sink_error = e.what();
    }
    sink_error = agree_on_reason(MPI_COMM_WORLD, sink_error);
    if (!sink_error.empty()) {
      refusal(block, sink_error);
      if (!plan) return finish(kExitUsage);
      ended(kExitUsage, sink_error);
      continue;
    }
    sink->set_columns(block.omb.full ? full_columns(*block.info, block.bench->columns()) : block.bench->columns());
    if (block.info->records.headline) sink->set_headline(statistic_name(*block.info->records.headline));

    set_crash_context(block.info->name + " start-up" + (block.id.empty() ? "" : " (block " + block.id + ")"));
    const std::size_t held_before = launch_buffers.held_bytes();
    BufferPool fresh_buffers(BufferAllocation::fresh_per_size);
    BufferPool& buffers = block.settings.fresh_buffers ? fresh_buffers : launch_buffers;
    ctx.benchmark = block.info->name;
    ctx.settings = &block.settings;
    ctx.buffers = &buffers;
    ctx.run_id = make_run_id(MPI_COMM_WORLD);
    ctx.deadline = block.deadline_s > 0 ? started + block.deadline_s : 0;
    Json options = block.bench->options_json();
    if (!block.omb_reading.as_object()->empty()) options.set("omb", block.omb_reading);
    // A block's context reads as that of a launch of its own: its command line is the block's.
    std::vector<std::string> command_line = argv_all;
    if (plan) {
      command_line = {argv_all.front(), block.info->name};
      command_line.insert(command_line.end(), block.args.begin(), block.args.end());
    }
    Json context = build_context(ctx, command_line, local, options);
    if (plan && ctx.rank == 0)
      context.set("plan", Json::object()
                              .set("block", block.id)
                              .set("position", position)
                              .set("blocks", static_cast<int>(blocks.size()))
                              .set("deadline_s", block.deadline_s > 0 ? Json(block.deadline_s) : Json())
                              .set("launch_run_id", launch_run_id)
                              .set("buffers_held_bytes", static_cast<long long>(held_before)));
    if (ctx.rank == 0) sink->write_context(context);
    if (block.omb.full) note_full_statistics(*sink, *block.info);

    const int code = block.bench->run(ctx, *sink);
    sink.reset();
    ctx.buffers = nullptr;
    ctx.deadline = 0;
    ended(code, ctx.deadline_passed ? "its deadline passed: what it had not begun was not measured (its records with status skipped)" : "");
    launch_code = plan ? kExitOk : code;
  }
  return finish(launch_code);
}

int run_benchmark(const BenchmarkInfo& info, const std::vector<std::string>& args, const std::vector<std::string>& argv_all) {
  std::vector<Block> blocks;
  blocks.push_back(parse_block(info, args));
  return run_blocks(blocks, argv_all, "");
}

// `gmb-bench plan FILE --status FILE`: the plan's blocks in one launch (run_blocks). The plan is read and every
// block's benchmark known before MPI starts; blocks must agree on --nic, which is applied before MPI_Init.
int plan_command(const std::vector<std::string>& args, const std::vector<std::string>& argv_all) {
  std::string status_path;
  bool help = false;
  ArgParser parser;
  parser.value({"--status"}, "FILE", "where rank 0 writes one JSON line per block once it has ended (a new file)",
               [&](const std::string& v) {
                 if (v.empty()) throw UsageError("--status needs a file name");
                 status_path = v;
               });
  parser.flag({"-h", "--help"}, "this help", &help);
  const std::vector<std::string> positionals = parser.parse(args);
  if (help) {
    std::printf("usage: mpirun -np N gmb-bench plan PLAN --status FILE\n"
                "Runs a plan's blocks, one after the other, in one launch. PLAN: one block a line, tab-separated: ID,\n"
                "deadline in seconds (0: none), the benchmark and its arguments (those a launch of its own would\n"
                "take, its --out among them).\n\noptions:\n%s",
                parser.help().c_str());
    return kExitOk;
  }
  if (positionals.size() != 1) throw UsageError("plan takes one plan file (given " +
                                                std::to_string(positionals.size()) + ")");
  if (status_path.empty()) throw UsageError("plan needs --status FILE: where each block's end is said");
  std::vector<Block> blocks;
  for (const PlanBlock& p : read_plan(positionals.front())) {
    Block block = parse_block(plan_benchmark(p, positionals.front()),
                              std::vector<std::string>(p.args.begin() + 1, p.args.end()));
    block.id = p.id;
    block.deadline_s = p.deadline_s;
    if (!blocks.empty() && block.settings.nic.text != blocks.front().settings.nic.text)
      throw UsageError(positionals.front() + " line " + std::to_string(p.line) + ": --nic " + block.settings.nic.text +
                       " differs from the first block's (" + blocks.front().settings.nic.text +
                       "): a launch pins one NIC, before MPI starts; give every block the same --nic");
    blocks.push_back(std::move(block));
  }
  return run_blocks(blocks, argv_all, status_path);
}

// An exception that reached main: its message and exit status. Before MPI starts this process alone
// returns; once it runs, a peer may be waiting for this rank in a call, so the job is aborted with the
// status (end_job), never left to std::terminate.
int escaped(int exit_code, const char* label, const std::string& what) {
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (initialized && !finalized) end_job(exit_code, label, what);
  std::fprintf(stderr, "gmb-bench: %s: %s\n", label, what.c_str());
  return exit_code;
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> argv_all(argv, argv + argc);
  capture_launch_environment();  // before the MPI library or gmb set anything in this process
  guard_stdout();  // a reader that stops early (| head) costs the view, never the run (stdout_reader.hpp)
  if (argc < 2 || argv_all[1] == "--help" || argv_all[1] == "-h" || argv_all[1] == "help") {
    print_usage();
    return argc < 2 ? kExitUsage : kExitOk;
  }
  if (argv_all[1] == "--version") {  // what a site's module or package check asks; MPI is not started for it
    const BuildInfo& build = build_info();
    std::printf("gmb-bench %s (revision %s; CUDA %s, NCCL %s; MPI %s)\n", build.version.c_str(),
                build.git_revision.c_str(), build.cuda ? "on" : "off", build.nccl ? "on" : "off",
                build.mpi_library.c_str());
    return kExitOk;
  }
  const std::string command = argv_all[1];
  const std::vector<std::string> args(argv_all.begin() + 2, argv_all.end());
  try {
    if (command == "list") return list_command(args);
    if (command == "plan") return plan_command(args, argv_all);
    const BenchmarkInfo* info = Registry::instance().find(command);
    if (!info) throw UsageError(unknown_benchmark(command, {"list"}));
    return run_benchmark(*info, args, argv_all);
  } catch (const UsageError& e) {
    return escaped(kExitUsage, "error", e.what());
  } catch (const Unsupported& e) {
    return escaped(kExitUnsupported, "unsupported", e.what());
  } catch (const std::exception& e) {
    return escaped(kExitFailure, "error", e.what());
  } catch (...) {
    return escaped(kExitFailure, "error", "an exception of unknown type");
  }
}
