// SPDX-License-Identifier: BSD-3-Clause
// The benchmark registry and the two shapes a benchmark can take.
//
// A benchmark declares its name, summary, rank bounds, options and what its records are (RecordShape),
// and supplies only setup, one iteration and derived metrics (SizeSweep); the runner owns sizes,
// warm-up, iteration counts, synchronisation, statistics and output. Tools that are not size sweeps
// (doctor, peaks) implement Benchmark::run directly. Adding a benchmark touches one file: it registers
// itself.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "gmb/args.hpp"
#include "gmb/awareness.hpp"
#include "gmb/buffer_pool.hpp"
#include "gmb/json.hpp"
#include "gmb/managed.hpp"
#include "gmb/nic_pinning.hpp"
#include "gmb/path.hpp"
#include "gmb/platform.hpp"
#include "gmb/record.hpp"
#include "gmb/size_limits.hpp"
#include "gmb/sizes.hpp"
#include "gmb/timing.hpp"

namespace gmb {

// Options every benchmark shares; parsed by the driver, owned by the runner.
struct RunSettings {
  std::vector<std::uint64_t> sizes;
  int iters = 1000, warmup = 100;
  int iters_large = 100, warmup_large = 10;
  std::uint64_t large_size = 1ull << 20;  // sizes >= this use the *_large counts
  int batch = 0;                          // iterations per timed sample; 0 = automatic
  bool validate = false;
  bool fresh_buffers = false;  // stress mode: buffers allocated per size (BufferPool)
  std::uint64_t memory_limit = 0;  // --memory-limit: bytes one rank may use for a size; 0: what is available
  // Adaptive repetitions (methodology.md "Timing and statistics"): --precision, the relative half-width of
  // the median's 95% confidence interval at which a size stops (0: fixed iterations, the default); the
  // iteration counts become caps, and --max-seconds caps a size's timed seconds (0: not given).
  double precision = 0;
  double max_seconds = 0;
  std::string out_path;
  StdoutFormat format = StdoutFormat::table;
  NicRequest nic;  // --nic: applied before MPI_Init (apply_nic_request)

  int iterations_for(std::uint64_t bytes) const { return bytes >= large_size ? iters_large : iters; }
  int warmup_for(std::uint64_t bytes) const { return bytes >= large_size ? warmup_large : warmup; }
  bool adaptive() const { return precision > 0; }
  double time_cap() const { return max_seconds > 0 ? max_seconds : kDefaultMaxSeconds; }
  Json to_json() const;

  static constexpr double kDefaultMaxSeconds = 1.0;
  // Every size aims at this many samples at least: automatic batching leaves them within the iterations asked for,
  // fixed counts that make fewer are topped up within the time cap, adaptive rounds reach them within the caps.
  static constexpr int kMinSamples = 10;
  // --window of the windowed benchmarks (bw, bibw, mbw, rma_bw, part_bw): messages in flight per iteration.
  static constexpr int kDefaultWindow = 64;
};

// Declares --precision and --max-seconds, which set `settings` (the driver declares them with the other
// common options).
void add_precision_options(ArgParser& parser, RunSettings& settings);

struct Context {
  MPI_Comm comm = MPI_COMM_WORLD;
  int rank = 0;
  int size = 1;
  Platform* platform = nullptr;
  const AwarenessReport* awareness = nullptr;
  const RunSettings* settings = nullptr;
  BufferPool* buffers = nullptr;  // where benchmarks take the buffers they hand to MPI
  std::string run_id;
  std::string benchmark;  // the registered name, as records spell it
  std::vector<RankFacts> ranks;  // every rank's host and GPU, filled at start-up on every rank
  LaunchCost launch_cost;        // every rank's kernel-launch cost, measured at start-up
  Json nic_pinning;              // this rank's --nic choice (apply_nic_request); null without --nic
  double deadline = 0;           // a plan's block: the MPI_Wtime() after which no further size is begun (0: none)
  // Set by a size sweep that stopped at the deadline (sweep_sizes); the sweep is handed a const Context.
  mutable bool deadline_passed = false;

  // Path between two ranks' buffers (the GPU runtime answers link questions when there is one).
  PathInfo path_between(int rank_a, bool gpu_backed_a, int rank_b, bool gpu_backed_b) const;
  // The path of a collective among all ranks (`gpu_backed[r]`: rank r's buffers are device or
  // managed memory): the class every pair shares, with the slowest pair's nominal rate, or class
  // "mixed" with the classes and their pair counts in `link`.
  PathInfo path_among(const std::vector<bool>& gpu_backed) const;
};

// A benchmark's positional arguments as its usage line names them ("SEND RECV") and what they mean.
struct Positionals {
  std::string names;
  std::string meaning;
  bool optional = false;
};
// OMB's two buffer letters of a pair's sides (parse_pair_memory); the collective operations (coll OP, nbc OP).
Positionals pair_letters();
Positionals collective_operations();

class Benchmark {
 public:
  virtual ~Benchmark() = default;
  // The positional arguments, for --help; none by default.
  virtual Positionals positionals() const { return {}; }
  // Declares the benchmark's own options (the common ones are declared by the driver).
  virtual void add_options(ArgParser& parser) { (void)parser; }
  // Checks positionals and option combinations once parsed; throws UsageError.
  virtual void configure(const std::vector<std::string>& positionals, int world_size, const Platform& platform) = 0;
  // The benchmark's options as they go into the context record.
  virtual Json options_json() const { return Json::object(); }
  // Sizes used when --sizes is not given.
  virtual std::string default_sizes() const { return "1:4M"; }
  // Columns of the human table.
  virtual std::vector<TableColumn> columns() const = 0;
  // Runs everything and writes result records; returns an ExitCode.
  virtual int run(Context& ctx, RecordSink& sink) = 0;
  // Whether --fresh-buffers means something here: the benchmark sweeps sizes over buffers it takes from
  // the pool. Others (one allocation for the whole run, or no MPI buffers) refuse the option.
  virtual bool sweeps_pooled_buffers() const { return false; }
  // Whether --precision means something here: the benchmark's sizes are repeated by the size-sweep runner,
  // which stops them adaptively. Others (their own loops) refuse the option.
  virtual bool takes_precision() const { return false; }
};

// A benchmark measured over the message sizes of RunSettings.
class SizeSweep : public Benchmark {
 public:
  int run(Context& ctx, RecordSink& sink) override;  // the runner (src/core/runner.cpp)
  bool sweeps_pooled_buffers() const override { return true; }
  bool takes_precision() const override { return true; }

  // Why this configuration cannot run here, or "". Ranks may answer differently;
  // the runner makes them agree.
  virtual std::string unsupported_reason(const Context& ctx) = 0;
  // What this rank holds to measure `bytes` (every buffer setup() takes and every host copy the
  // benchmark makes, --validate included) and the counts its MPI calls carry. Asked for every size
  // before anything is allocated; a size beyond a limit is not set up (size_verdicts).
  virtual SizeNeeds needs(const Context& ctx, std::size_t bytes) const = 0;
  // Untimed: take buffers for `bytes` from ctx.buffers and fill them; may throw Unsupported. Called once
  // more, first, at the largest size (then teardown()), so that the pool allocates what the sweep needs once.
  virtual void setup(const Context& ctx, std::size_t bytes) = 0;
  // Untimed, --validate only. Checked iterations are extra iterations, one before the warm-up and one after
  // the timed samples (records: "validated_iterations"); timed iterations are never filled or checked, so a
  // validated figure is measured exactly as an unvalidated one. Producers write the pattern for `seed`,
  // consumers poison.
  virtual void prepare(std::uint32_t seed) { (void)seed; }
  // One timed iteration.
  virtual void iterate() = 0;
  // Timed: waits until the iterations issued so far have completed. The runner calls it at the end
  // of every sample (and of the warm-up), so a transport that enqueues work (NCCL) can issue a
  // sample's iterations back to back, stream-ordered, as nccl-tests does. MPI's blocking calls are
  // complete when they return: nothing to do.
  virtual void complete() {}
  // The fewest iterations of an automatic batch (--batch not given). A transport whose iterations are enqueued pays
  // a fixed cost per sample (the first launch, the final synchronisation) that one iteration does not amortise.
  virtual int min_batch() const { return 1; }
  // Untimed, --validate only: "" when every received byte of the checked iteration matches `seed`'s pattern.
  virtual std::string verify(std::uint32_t seed) { (void)seed; return ""; }
  // Adds what identifies the configuration (memory kinds, strategy, window ...) to every record,
  // unsupported ones included, so that a refused point still says what was refused.
  virtual void describe_configuration(Json& record) const { (void)record; }
  // Adds the measured fields to a result record (time_us, bandwidth ...); called on rank 0 only.
  // `seconds` holds one sample per entry: seconds per iteration, the slowest rank's (compensated
  // where the held ManagedPlacement's launch_in_my_iteration says so).
  virtual void describe_result(Json& record, std::size_t bytes, const std::vector<double>& seconds) = 0;
  // Figures that combine the ranks otherwise than by the slowest one (mlat: the mean over pairs). When
  // gathers_every_rank() is true the runner also gathers every rank's samples on rank 0 and calls
  // describe_every_rank after describe_result with them: `seconds_by_rank[r]` is rank r's samples, each
  // compensated as the slowest rank's given to describe_result were.
  virtual bool gathers_every_rank() const { return false; }
  virtual void describe_every_rank(Json& record, std::size_t bytes, const std::vector<std::vector<double>>& seconds_by_rank) {
    (void)record, (void)bytes, (void)seconds_by_rank;
  }
  // Untimed: give back what setup() took (the pool keeps the memory unless --fresh-buffers).
  virtual void teardown() {}

  // Managed memory (um, managed placements: methodology.md "Managed memory placements"): a sweep whose
  // data is placed holds the placement the runner applies around its iterations; `placement` outlives the
  // sweep's runs.
 protected:
  void hold_placement(ManagedPlacement* placement) { managed_placement_ = placement; }

 private:
  ManagedPlacement* managed_placement_ = nullptr;  // none: no managed memory
};

// What a sweep over sizes does around each size's measurement (the runner, nbc): sizes beyond a limit
// are refused before anything is allocated, buffers are reserved at the largest measurable size, each
// size is set up with the ranks agreeing whether it was refused (then torn down), and a refused size is
// recorded unsupported and left for the next. `measure` runs for sizes set up on every rank, tears down
// and returns its exit status. Returns the sweep's: the worst of them, at least kExitUnsupported when a
// size was refused. Collective over ctx.comm.
struct SweepSteps {
  std::function<void(Json& record)> describe;  // what identifies the configuration, on every record
  std::function<SizeNeeds(std::size_t bytes)> needs;
  std::function<void(std::size_t bytes)> setup;  // may throw Unsupported
  std::function<void()> teardown;
  std::function<int(std::size_t index, std::size_t bytes)> measure;
};
int sweep_sizes(const Context& ctx, RecordSink& sink, const std::vector<std::uint64_t>& sizes, const SweepSteps& steps);

// A point that is not measured: rank 0 writes an unsupported result record with the reason, `describe`
// adding what was refused. Returns kExitUnsupported, the exit status such a point leaves.
int record_unsupported(const Context& ctx, RecordSink& sink, std::size_t bytes, const std::string& reason,
                       const std::function<void(Json& record)>& describe);
// A configuration refused as a whole: said once on stderr, recorded unsupported at every size. Returns
// kExitUnsupported.
int record_unsupported_sweep(const Context& ctx, RecordSink& sink, const std::vector<std::uint64_t>& sizes,
                             const std::string& reason, const std::function<void(Json& record)>& describe);

// What kind of measurement a benchmark is, for whoever groups its records.
enum class Family {
  pt2pt,       // one pair of ranks (latency, bw, bibw)
  multi_pair,  // ranks/2 pairs at once (mbw, mlat)
  collective,  // blocking collectives (coll)
  nbc,         // non-blocking collectives and overlap
  managed,     // managed-memory placements (um)
  rma,         // one-sided communication between a pair of ranks (rma_latency, rma_bw, rma_bibw)
  partitioned, // MPI-4 partitioned point-to-point (part_latency, part_bw, part_overlap)
  halo,
  peaks,
  doctor,
};
const char* family_name(Family family);  // "pt2pt", "multi-pair", "collective", ...

// The statistics objects result records carry (docs/records.md), in the order descriptions list them.
enum class Statistic { time_us, bandwidth_GBps, busbw_GBps, message_rate_Mps };
const char* statistic_name(Statistic statistic);  // "time_us", ...
const std::vector<Statistic>& all_statistics();

// What a benchmark's result records are, declared where it registers and described by
// `gmb-bench list --format json` (docs/records.md "The engine's description").
struct RecordShape {
  Family family = Family::pt2pt;
  std::vector<Statistic> metrics;        // the statistics objects its result records carry, in Statistic order
  std::optional<Statistic> headline;     // the one tables and plots rank it by; none for a record without figures
  std::vector<std::string> transports = {"mpi"};  // the --transport values it accepts
  bool operations = false;               // takes collective operation names (coll OP, nbc OP)
};

// Which way the data a benchmark's figures count moves: one way (bw), both ways at once (bibw: its bandwidth is
// what both directions carry together), or neither where the figure is no transfer between two sides (latency,
// collectives, peaks).
enum class Directions { none, uni, bi };
const char* directions_name(Directions d);  // null for none, "uni", "bi"

struct BenchmarkInfo {
  std::string name;
  std::string summary;
  int min_ranks = 1;
  int max_ranks = 0;  // 0: no upper bound
  bool even_ranks = false;
  std::function<std::unique_ptr<Benchmark>()> make;
  RecordShape records;
  Directions directions = Directions::none;
  bool overlap = false;               // measures how much of a transfer hides behind compute (nbc's arithmetic)
  // The OSU Micro-Benchmarks program it stands for (what OMB's -m and -d read by); none where OMB has no such.
  std::optional<OmbCounterpart> omb = std::nullopt;
};

class Registry {
 public:
  static Registry& instance();
  void add(BenchmarkInfo info);
  const BenchmarkInfo* find(const std::string& name) const;
  const std::vector<BenchmarkInfo>& all() const { return benchmarks_; }

 private:
  std::vector<BenchmarkInfo> benchmarks_;
};

// Checks the world size against the benchmark's bounds; "" when acceptable.
std::string rank_count_problem(const BenchmarkInfo& info, int world_size);

// A bandwidth benchmark: a transfer between two sides (directions) ranked by its bandwidth (bw, bibw, mbw, rma_bw,
// part_bw ...), as the engine's description defines it for the harness.
bool measures_bandwidth(const BenchmarkInfo& info);
// Why `bytes` is no size for the benchmark `info` describes, whatever the machine, or "": a bandwidth of 0-byte
// messages is not defined (latency measures 0 B).
std::string size_meaning_problem(const BenchmarkInfo& info, std::uint64_t bytes);

// Why --precision / --max-seconds cannot be given as parsed (--max-seconds without --precision, or a benchmark
// whose loop is not the size sweep), or "".
std::string precision_problem(const BenchmarkInfo& info, const Benchmark& bench, const RunSettings& settings);

struct Registration {
  explicit Registration(BenchmarkInfo info) { Registry::instance().add(std::move(info)); }
};

// A result record's common fields: schema, type, run id, benchmark, status "ok", bytes.
Json result_record(const Context& ctx, std::size_t bytes);
// A result record with status "unsupported" and the reason (what was refused is added by the caller).
Json unsupported_record(const Context& ctx, std::size_t bytes, const std::string& reason);

// Whether a plan's block is past its deadline (Context::deadline), and if so marks the context so (deadline_passed).
// Rank 0's clock decides and every rank learns it: collective, called by every rank at the same point of the block
// (a size, a strategy), before beginning it. Always false outside a plan.
bool deadline_reached(const Context& ctx);
// Why a block whose deadline passed did not begin `what` ("this size", "this strategy"): a record's status
// "skipped" carries it.
std::string deadline_reason(const std::string& what);
// A result record with status "skipped" and deadline_reason(what).
Json skipped_record(const Context& ctx, std::size_t bytes, const std::string& what);
// Sets "validation" (off, passed, or failed with "validation_error" and status "failed"); a failure
// is also reported on stderr, naming `what` was measured.
void set_validation(Json& record, bool validated, const std::string& error, const std::string& what);

// The pattern seed of a size's k-th checked iteration: seeds differ per size and checked iteration, so a
// buffer left from an earlier one never passes validation.
std::uint32_t validation_seed(std::size_t size_index, int checked);

// Once-per-launch buffers (BufferPool): sets the sweep up at the largest of `sizes` it can be set up at
// (a size refused as Unsupported is skipped), then tears it down, the pool keeping the memory, so that
// every size after reuses it. Nothing to do in fresh-per-size mode. Collective over ctx.comm.
void reserve_buffers(const Context& ctx, const std::vector<std::uint64_t>& sizes,
                     const std::function<void(std::size_t bytes)>& setup, const std::function<void()>& teardown);

// The memory this rank may use now: the host's available memory and its GPU's free memory, each less the
// margin and shared among the ranks of the host / of the GPU (ctx.ranks), plus what the pool holds free
// for reuse; --memory-limit.
MemoryBudget memory_budget(const Context& ctx);

// Which sizes of a sweep can be measured here.
struct SizeVerdicts {
  std::vector<std::string> refusals;      // per size: why it is not measured (the same on every rank), or ""
  std::vector<std::uint64_t> measurable;  // the sizes without a refusal, in order
};
// Collective over ctx.comm: every size's needs (`needs_at`) against the limits, before anything is allocated.
SizeVerdicts size_verdicts(const Context& ctx, const std::vector<std::uint64_t>& sizes,
                           const std::function<SizeNeeds(std::size_t bytes)>& needs_at);

}  // namespace gmb
