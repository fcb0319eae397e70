// SPDX-License-Identifier: BSD-3-Clause
// One-sided communication (MPI-3 RMA) between two ranks (docs/methodology.md "One-sided communication (RMA)"):
// rma_latency, rma_bw and rma_bibw, after OMB's osu_put_latency, osu_get_bw, osu_acc_latency, osu_fop_latency,
// osu_cas_latency and osu_put_bibw. Rank 0 is the origin and rank 1 the target (--send and --recv are their
// memory); where the pattern is a round trip (fence and pscw latency) or both ways (bibw), each rank is both.
// Windows are created per size, untimed, with errors returned: a library that refuses the memory, or fails an
// RMA call in the untimed probe iteration, leaves the size unsupported with its own words.
#include <mpi.h>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "gmb/benchmark.hpp"
#include "gmb/error.hpp"
#include "gmb/known_issues.hpp"
#include "gmb/managed.hpp"
#include "gmb/mpi_features.hpp"
#include "gmb/rma.hpp"
#include "gmb/stats.hpp"

namespace gmb {

// ---- The rules (gmb/rma.hpp) ------------------------------------------------------------------------------
namespace rma {

const std::vector<OpInfo>& operations() {
  static const std::vector<OpInfo> table = {
      {Op::put, "put", "MPI_Put", "byte", 1, false, false, false},
      {Op::get, "get", "MPI_Get", "byte", 1, false, true, false},
      {Op::acc, "acc", "MPI_Accumulate", "int", 4, false, false, false},
      {Op::get_acc, "get_acc", "MPI_Get_accumulate", "int", 4, false, true, true},
      {Op::fop, "fop", "MPI_Fetch_and_op", "int64", 8, true, true, true},
      {Op::cas, "cas", "MPI_Compare_and_swap", "int64", 8, true, true, true},
  };
  return table;
}

const OpInfo& info(Op op) {
  for (const auto& o : operations())
    if (o.op == op) return o;
  throw std::logic_error("unknown RMA operation");
}

std::string op_names(const std::vector<Op>& accepted, const std::string& separator) {
  std::string names;
  for (Op op : accepted) names += (names.empty() ? "" : separator) + info(op).name;
  return names;
}

Op parse_op(const std::string& text, const std::vector<Op>& accepted) {
  std::vector<std::string> names;
  for (Op op : accepted) names.push_back(info(op).name);
  const std::string chosen = parse_choice(text, names, "RMA operation");
  for (Op op : accepted)
    if (chosen == info(op).name) return op;
  throw std::logic_error("parse_choice accepted an unlisted operation");
}

Sync parse_sync(const std::string& text) {
  const std::string chosen = parse_choice(text, {"fence", "lock", "flush", "pscw"}, "synchronisation");
  if (chosen == "fence") return Sync::fence;
  if (chosen == "lock") return Sync::lock;
  if (chosen == "flush") return Sync::flush;
  return Sync::pscw;
}

WindowCreation parse_window_creation(const std::string& text) {
  return parse_choice(text, {"create", "allocate"}, "window creation") == "create" ? WindowCreation::create
                                                                                   : WindowCreation::allocate;
}

const char* sync_name(Sync sync) {
  switch (sync) {
    case Sync::fence: return "fence";
    case Sync::lock: return "lock";
    case Sync::flush: return "flush";
    case Sync::pscw: return "pscw";
  }
  return "?";
}

const char* window_creation_name(WindowCreation creation) {
  return creation == WindowCreation::create ? "create" : "allocate";
}

std::string size_problem(Op op, std::size_t bytes) {
  const OpInfo& o = info(op);
  const std::string element = std::to_string(o.element_bytes) + "-byte " + (o.element_bytes == 8 ? "MPI_INT64_T" : "MPI_INT");
  if (o.single_element && bytes != o.element_bytes)
    return std::string(o.name) + " (" + o.call + ") moves one " + element + " element: it measures " +
           std::to_string(o.element_bytes) + " bytes only (give --sizes " + std::to_string(o.element_bytes) + ")";
  if (o.element_bytes > 1 && (bytes == 0 || bytes % o.element_bytes != 0))
    return std::string(o.name) + " (" + o.call + ") moves " + element + " elements: the size must be a positive multiple of " +
           std::to_string(o.element_bytes) + " bytes";
  return "";
}

// Small values, so that an int sum of a checked operation is exact and timed accumulates (which keep adding
// the last operands written) stay far from overflow: at most 16 per operation.
std::int64_t operand_value(std::size_t index, std::uint32_t seed) { return (pattern_byte(index, seed) & 0x0f) + 1; }
std::int64_t initial_target_value(std::size_t index, std::uint32_t seed) { return pattern_byte(index, ~seed); }

Expected expected_after(Op op, std::int64_t operand, std::int64_t initial) {
  switch (op) {
    case Op::acc:
    case Op::get_acc:
    case Op::fop: return {initial + operand, initial};
    case Op::cas: return {operand, initial};  // compared with `initial`: it swaps
    case Op::put: return {operand, 0};
    case Op::get: return {initial, initial};
  }
  return {};
}

}  // namespace rma

namespace {

using rma::Op;
using rma::Sync;
using rma::WindowCreation;

// Every RMA call of an iteration and of the window's setup and release: checked as GMB_MPI_CHECK checks, except
// while errors are tolerated (the probe iteration in setup, the release after a refusal): then the first failure
// is kept as the reason and the remaining calls still run, since the peer is waiting in them.
#define GMB_RMA_CHECK(call) check_rma((call), #call, __FILE__, __LINE__)

// The window MPI_Win_allocate returns: host memory the library owns, filled and checked as host memory is.
class LibraryWindowMemory final : public Buffer {
 public:
  LibraryWindowMemory(void* data, std::size_t bytes) : Buffer(data, bytes) {}
  void fill(std::size_t bytes, std::uint32_t seed) override { fill_pattern(data_, bytes, seed); }
  void poison(std::size_t bytes, std::uint32_t seed) override { fill_pattern(data_, bytes, seed, true); }
  std::optional<std::size_t> first_mismatch(std::size_t bytes, std::uint32_t seed) const override {
    return find_pattern_mismatch(data_, bytes, seed);
  }
};

// Where this MPI library is known to crash or hang in a configuration (refused with the reason unless
// --run-known-crashes), or "". `device_memory`: a rank hands the library device memory (origin or window);
// `device_only`: every buffer of both ranks is device memory.
std::string known_rma_crash(Op op, WindowCreation creation, bool device_memory, bool device_only) {
  char text[MPI_MAX_LIBRARY_VERSION_STRING] = {0};
  int length = 0;
  GMB_MPI_CHECK(MPI_Get_library_version(text, &length));
  const LibraryVersion library = parse_library_version(text);
  if (library.family != "Open MPI") return "";
  const std::string version = "Open MPI " + std::to_string(library.major) + "." + std::to_string(library.minor) + "." +
                              std::to_string(library.patch);
  // OMPI_MCA_<framework> (mpirun --mca passes its parameters so) chooses components: whether `name` may be chosen.
  auto may_choose = [](const char* framework, const std::string& name) {
    const char* chosen = std::getenv(framework);
    if (!chosen || !*chosen) return true;
    const std::string list = chosen;
    const bool named = list.find(name) != std::string::npos;
    return list[0] == '^' ? !named : named;
  };
  // Another pml asked for by name (ob1, cm); without one, Open MPI picks ucx where UCX can run.
  const char* pml = std::getenv("OMPI_MCA_pml");
  const bool pml_not_ucx = pml && *pml && std::string(pml) != "ucx";
  // Open MPI 5.0: osc/ucx, the default one-sided component wherever UCX is built in, runs its own UCX endpoints.
  // Under another pml they work for device windows only with UCX's memory-type cache off; otherwise locks fail
  // (device memory) or epochs hang (host memory).
  const char* memtype_cache = std::getenv("UCX_MEMTYPE_CACHE");
  const bool cache_off = memtype_cache && (std::string(memtype_cache) == "n" || std::string(memtype_cache) == "no");
  if (library.major == 5 && library.minor == 0 && pml_not_ucx && may_choose("OMPI_MCA_osc", "ucx") &&
      !(device_only && cache_off))
    return version + "'s osc/ucx outside pml ucx moves device windows only with UCX_MEMTYPE_CACHE=n and device "
           "memory on both sides: without it MPI_Win_lock / MPI_Win_unlock fail (\"ucp_atomic_post failed\"), and "
           "host-memory windows hang in flush and PSCW epochs (seen with 5.0.7 and UCX 1.22, pml ob1, btl smcuda, on "
           "H100). Use -x UCX_MEMTYPE_CACHE=n with device buffers, --mca pml ucx, another osc component "
           "(--mca osc ^ucx), or --run-known-crashes";
  // Open MPI 5.0's osc/ucx applies accumulate-type operations on the CPU, reading the origin buffer as host memory.
  if (library.major == 5 && library.minor == 0 && device_memory && op != Op::put && op != Op::get)
    return version + "'s osc/ucx applies MPI_Accumulate, MPI_Get_accumulate, MPI_Fetch_and_op and "
           "MPI_Compare_and_swap on the CPU, which reads device memory as host memory: the origin dies with SIGSEGV "
           "in ompi_osc_ucx_accumulate (seen with 5.0.7 and UCX 1.22, pml ucx, on H100). Use host or pinned buffers, "
           "or --run-known-crashes to try it anyway";
  // Open MPI 4.1's osc/rdma (its default one-sided component on one host when btl/vader has a single-copy
  // mechanism) faults in the target's progress (mca_btl_vader_poll_handle_frag) on MPI_Compare_and_swap into an
  // MPI_Win_allocate window: a ten-line program does the same (Debian's 4.1.4); osc/ucx and osc/pt2pt swap correctly.
  if (library.major == 4 && library.minor == 1 && op == Op::cas && creation == WindowCreation::allocate &&
      may_choose("OMPI_MCA_osc", "rdma"))
    return version +
           "'s osc/rdma segfaults the target (in mca_btl_vader_poll_handle_frag) on MPI_Compare_and_swap into an "
           "MPI_Win_allocate window (seen with Debian's 4.1.4, 2 ranks on one host; osc/ucx and osc/pt2pt swap "
           "correctly). Use --win create, OMPI_MCA_osc=ucx or pt2pt, or --run-known-crashes to try it anyway";
  return "";
}

// MPI_Win_allocate sizes are whole multiples of this (create_window says why).
constexpr std::size_t kAllocateGranule = 64;

// Pageable host memory: what MPI_Win_allocate gives (neither page-locked nor the GPU's).
bool pageable_host(const MemoryKind& kind) { return kind.host_accessible && !kind.page_locked && !kind.gpu_backed; }

std::int64_t element_of(const std::vector<unsigned char>& image, std::size_t element_bytes, std::size_t index) {
  if (element_bytes == 8) {
    std::int64_t v;
    std::memcpy(&v, image.data() + index * 8, 8);
    return v;
  }
  std::int32_t v;
  std::memcpy(&v, image.data() + index * 4, 4);
  return v;
}

template <typename ValueOf>
std::vector<unsigned char> integer_image(std::size_t elements, std::size_t element_bytes, ValueOf value_of) {
  std::vector<unsigned char> image(elements * element_bytes);
  for (std::size_t k = 0; k < elements; ++k) {
    const std::int64_t v64 = value_of(k);
    if (element_bytes == 8) {
      std::memcpy(image.data() + k * 8, &v64, 8);
    } else {
      const std::int32_t v32 = static_cast<std::int32_t>(v64);
      std::memcpy(image.data() + k * 4, &v32, 4);
    }
  }
  return image;
}

// What one iteration is: one operation (latency: each way in turn where the synchronisation is active), a window
// of operations from rank 0 (bw), or windows both ways at once (bibw).
enum class Shape { latency, one_way_window, both_ways_window };

class OneSided : public SizeSweep {
 public:
  Positionals positionals() const override { return pair_letters(); }
  OneSided(Shape shape, std::vector<Op> accepted) : shape_(shape), accepted_(std::move(accepted)) {}

  std::string default_sizes() const override { return "4:4M"; }
  void add_options(ArgParser& p) override;
  void configure(const std::vector<std::string>& positionals, int world_size, const Platform& platform) override;
  Json options_json() const override;
  std::string unsupported_reason(const Context& ctx) override;
  SizeNeeds needs(const Context& ctx, std::size_t bytes) const override;
  void setup(const Context& ctx, std::size_t bytes) override;
  void iterate() override;
  void prepare(std::uint32_t seed) override;
  std::string verify(std::uint32_t seed) override;
  void describe_configuration(Json& record) const override;
  void teardown() override;

 protected:
  bool windowed() const { return shape_ != Shape::latency; }
  int operations_per_iteration() const { return windowed() ? window_ : 1; }
  const rma::OpInfo& op() const { return rma::info(op_); }
  std::string sync_text() const { return rma::sync_name(sync_); }
  void add_path(Json& record) const { record.set("path", path_.to_json()); }
  // time_us (each sample times `time_scale`) and, when `bytes_per_iteration` > 0, bandwidth_GBps.
  static void set_figures(Json& record, const std::vector<double>& seconds, double time_scale, double bytes_per_iteration);

  Shape shape_;
  Sync sync_ = Sync::flush;
  int window_ = RunSettings::kDefaultWindow;

 private:
  // Whether `rank` issues operations in an iteration: rank 0 always; rank 1 too in bibw and in the round trips
  // of fence and pscw latency. A rank's window is a target when its peer is an origin.
  bool is_origin(int rank) const;
  bool is_target(int rank) const { return is_origin(1 - rank); }
  const MemorySpec& spec_of(int rank) const { return rank == 0 ? send_ : recv_; }
  std::size_t span() const { return bytes_ * static_cast<std::size_t>(operations_per_iteration()); }
  static std::uint32_t seed_of(int rank, std::uint32_t seed) { return seed * 7919u + static_cast<std::uint32_t>(rank); }

  void check_rma(int rc, const char* call, const char* file, int line);
  // Window creation, collective and with errors returned; throws Unsupported (every rank agreeing) on a refusal.
  void create_window();
  void write_initial_data();
  // The untimed first iteration, errors returned: throws Unsupported (every rank agreeing) on a failed call.
  void probe();
  // Operation `index` of this rank's iteration, at displacement index * bytes of the peer's window.
  void issue(int index);
  void issue_all();
  void passive_iteration();
  void access_epoch();
  void exposure_epoch();
  void latency_iteration();
  void one_way_iteration();
  void both_ways_iteration();
  // Local reads and writes of this rank's own window: in passive-target modes inside a shared lock of it
  // (the separate memory model needs it; the unified one allows it), plain otherwise (the iteration's active
  // synchronisation orders them).
  template <typename Body>
  void with_own_window(Body&& body);
  void upload(Buffer& b, bool host_accessible, const std::vector<unsigned char>& image) const;
  std::vector<unsigned char> download(const Buffer& b, bool host_accessible, std::size_t bytes) const;
  // Which part of an integer operation's outcome a buffer holds: the target's new value or the value fetched.
  enum class Result { target, fetched };
  // "" when every element of `buffer` is that part of the outcome of rank `operand_rank`'s operands applied to rank
  // `target_rank`'s initial values for `seed`; else the first wrong element, after `where`.
  std::string check_elements(const Buffer& buffer, bool buffer_host_accessible, int operand_rank, int target_rank,
                             Result result, std::uint32_t seed, const std::string& where);
  std::string check_window(std::uint32_t seed);
  std::string check_fetched(std::uint32_t seed);

  std::vector<Op> accepted_;
  Op op_ = Op::put;
  WindowCreation creation_ = WindowCreation::create;
  bool run_known_crashes_ = false;
  std::string send_text_ = "host", recv_text_ = "host";  // as given; parsed by configure()
  MemorySpec send_, recv_;

  // Per size (setup .. teardown).
  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0, peer_ = 1;
  std::size_t bytes_ = 0;
  const Platform* platform_ = nullptr;
  std::string kind_name_;               // this rank's memory kind
  bool host_accessible_ = true;         // its buffers'
  bool window_host_accessible_ = true;  // its window: the kind's, or the library's host memory
  std::unique_ptr<Buffer> origin_, result_, compare_, window_memory_;
  MPI_Win win_ = MPI_WIN_NULL;
  MPI_Group peer_group_ = MPI_GROUP_NULL;
  bool locked_ = false;         // flush: this rank holds its lock on the peer's window
  bool tolerating_ = false;     // errors are kept (first_failure_) instead of ending the job
  bool refused_ = false;        // the probe failed: teardown releases what it can
  std::string first_failure_;
  PathInfo path_;
};

void OneSided::add_options(ArgParser& p) {
  p.value({"--op"}, rma::op_names(accepted_, "|"),
          "the RMA operation (default put): put and get move bytes; acc and get_acc add ints (MPI_SUM); fop and "
          "cas are one 8-byte element",
          [this](const std::string& v) { op_ = rma::parse_op(v, accepted_); });
  p.value({"--sync", "-s"}, "fence|lock|flush|pscw",
          "synchronisation (default flush: one lock per size, MPI_Win_flush per iteration; lock: lock/unlock per "
          "iteration; fence: MPI_Win_fence epochs; pscw: post/start/complete/wait)",
          [this](const std::string& v) { sync_ = rma::parse_sync(v); });
  p.value({"--win", "-w"}, "create|allocate",
          "window creation (default create: MPI_Win_create over a buffer of --send/--recv memory; allocate: "
          "MPI_Win_allocate, host memory the library allocates)",
          [this](const std::string& v) { creation_ = rma::parse_window_creation(v); });
  p.value({"--send"}, "KIND", "memory of the origin (rank 0): host, pinned, device, managed",
          [this](const std::string& v) { send_text_ = v; });
  p.value({"--recv"}, "KIND", "memory of the target (rank 1), its window's with --win create",
          [this](const std::string& v) { recv_text_ = v; });
  p.flag({"--run-known-crashes"},
         "run configurations this MPI library is known to crash in (refused by default, with the reason: "
         "docs/methodology.md)",
         &run_known_crashes_);
  if (windowed()) {
    p.value({"--window", "-W", "--window-size"}, "W", "operations per synchronisation (default 64)",
            [this](const std::string& v) { window_ = parse_positive_int(v, "window"); });
  }
}

void OneSided::configure(const std::vector<std::string>& positionals, int, const Platform& platform) {
  const PairMemory memory = parse_pair_memory(positionals, send_text_, recv_text_, platform.memory);
  send_ = memory.send;
  recv_ = memory.recv;
  for (const MemorySpec* spec : {&send_, &recv_})
    if (spec->placement != Placement::none)
      throw UsageError("memory '" + spec->text() +
                       "': the one-sided benchmarks do not place managed memory before an operation; give plain "
                       "managed (OMB's M), or measure placements with the point-to-point benchmarks (latency, bw, "
                       "bibw, um)");
}

Json OneSided::options_json() const {
  Json o = Json::object()
               .set("operation", op().name)
               .set("sync", sync_text())
               .set("window_creation", rma::window_creation_name(creation_))
               .set("send", send_.text())
               .set("recv", recv_.text());
  if (windowed()) o.set("window", window_);
  return o;
}

void OneSided::describe_configuration(Json& record) const {
  record.set("operation", op().name)
      .set("variant", sync_text() + " " + rma::window_creation_name(creation_))
      .set("rma", Json::object()
                      .set("operation", op().name)
                      .set("call", op().call)
                      .set("sync", sync_text())
                      .set("window_creation", rma::window_creation_name(creation_))
                      .set("datatype", op().datatype))
      .set("memory", Json::object().set("send", send_.text()).set("recv", recv_.text()))
      .set("size_convention", "message")
      .set("transport", "mpi")
      .set("strategy", "direct");
  if (windowed()) record.set("window", window_);
}

bool OneSided::is_origin(int rank) const {
  if (rank == 0 || shape_ == Shape::both_ways_window) return true;
  return shape_ == Shape::latency && !rma::passive(sync_);
}

std::string OneSided::unsupported_reason(const Context& ctx) {
  // Said alike on every rank: whichever rank's window the library would allocate in the wrong memory.
  if (creation_ == WindowCreation::allocate) {
    for (int rank : {0, 1}) {
      const MemoryKind& kind = ctx.platform->memory.known(spec_of(rank).kind);
      if (is_target(rank) && !pageable_host(kind))
        return "MPI_Win_allocate allocates the window itself, in host memory; a " + kind.name +
               " window needs --win create";
    }
  }
  if (!run_known_crashes_) {
    bool device_memory = false, device_only = creation_ == WindowCreation::create;
    for (int rank : {0, 1}) {
      const bool gpu = ctx.platform->memory.known(spec_of(rank).kind).gpu_memory;
      device_memory = device_memory || gpu;
      device_only = device_only && gpu;
    }
    if (std::string crash = known_rma_crash(op_, creation_, device_memory, device_only); !crash.empty()) return crash;
  }
  const std::string& mine = spec_of(ctx.rank).kind;
  const MemoryKind* kind = ctx.platform->memory.find(mine);
  if (!kind->available()) return "memory kind '" + mine + "' is not available: " + kind->unavailable_reason;
  // Every buffer of this rank, its window included with --win create, is of its kind.
  return device_pointer_refusal(*kind, *ctx.awareness);
}

SizeNeeds OneSided::needs(const Context& ctx, std::size_t bytes) const {
  SizeNeeds n;
  n.refuse(rma::size_problem(op_, bytes));
  const MemoryKind& kind = ctx.platform->memory.known(spec_of(ctx.rank).kind);
  const std::uint64_t span = static_cast<std::uint64_t>(bytes) * static_cast<std::uint64_t>(operations_per_iteration());
  if (is_origin(ctx.rank)) {
    // The operations of an iteration are in flight until its synchronisation completes them.
    n.add_in_flight(static_cast<std::uint64_t>(operations_per_iteration()), std::string(op().call) + " operations");
    n.add(op_ == Op::get ? "origin (get destination)" : "origin", span, kind);
    if (op().has_result_buffer) n.add("result", span, kind);
    if (op_ == Op::cas) n.add("compare", op().element_bytes, kind);
  }
  if (is_target(ctx.rank))
    n.add("window", span, creation_ == WindowCreation::allocate ? MemorySide::host : side_of(kind));
  if (op().element_bytes > 1) n.add("integer image", span, MemorySide::host);
  const char* datatype = op().element_bytes == 1 ? "MPI_BYTE" : op().element_bytes == 4 ? "MPI_INT" : "MPI_INT64_T";
  n.check_count(rma::element_count(op_, bytes), op().element_bytes, std::string(op().call) + " with " + datatype);
  return n;
}

void OneSided::check_rma(int rc, const char* call, const char* file, int line) {
  if (rc == MPI_SUCCESS) return;
  if (!tolerating_) check_mpi(rc, call, file, line);
  if (first_failure_.empty()) first_failure_ = std::string(call) + " failed: " + mpi_error_text(rc);
}

void OneSided::setup(const Context& ctx, std::size_t bytes) {
  comm_ = ctx.comm;
  rank_ = ctx.rank;
  peer_ = 1 - ctx.rank;
  bytes_ = bytes;
  platform_ = ctx.platform;
  // Every rank takes its buffers before the collective window creation: a rank whose memory is refused must not
  // leave its peer waiting in MPI_Win_create.
  std::string refusal;
  try {
    const MemoryKind& kind = ctx.platform->memory.require(spec_of(rank_).kind);
    kind_name_ = kind.name;
    host_accessible_ = kind.host_accessible;
    if (is_origin(rank_)) {
      origin_ = ctx.buffers->take(kind, span());
      if (op().has_result_buffer) result_ = ctx.buffers->take(kind, span());
      if (op_ == Op::cas) compare_ = ctx.buffers->take(kind, op().element_bytes);
    }
    if (is_target(rank_) && creation_ == WindowCreation::create) {
      window_memory_ = ctx.buffers->take(kind, span());
      window_host_accessible_ = kind.host_accessible;
    }
  } catch (const Unsupported& e) {
    refusal = e.what();
  }
  refusal = agree_on_reason(comm_, refusal);
  if (!refusal.empty()) throw Unsupported(refusal);
  create_window();
  write_initial_data();
  if (sync_ == Sync::pscw) {
    MPI_Group world_group;
    GMB_MPI_CHECK(MPI_Comm_group(comm_, &world_group));
    GMB_MPI_CHECK(MPI_Group_incl(world_group, 1, &peer_, &peer_group_));
    GMB_MPI_CHECK(MPI_Group_free(&world_group));
  }
  const MemoryKind& send = ctx.platform->memory.known(send_.kind);
  const MemoryKind& recv = ctx.platform->memory.known(recv_.kind);
  path_ = ctx.path_between(0, send.gpu_backed, 1, recv.gpu_backed && creation_ == WindowCreation::create);
  probe();
}

// The data exists before timing starts: the origin's pattern (put, get) or operands, the target's values.
void OneSided::write_initial_data() {
  const std::size_t element = op().element_bytes, elements = span() / element;
  if (is_origin(rank_)) {
    if (element == 1) {
      origin_->fill(span(), seed_of(rank_, 0));
    } else {
      upload(*origin_, host_accessible_,
             integer_image(elements, element, [&](std::size_t k) { return rma::operand_value(k, seed_of(rank_, 0)); }));
    }
    if (compare_)
      upload(*compare_, host_accessible_,
             integer_image(1, element, [&](std::size_t) { return rma::initial_target_value(0, seed_of(peer_, 0)); }));
  }
  if (!is_target(rank_)) return;
  if (element == 1) {
    window_memory_->fill(span(), seed_of(rank_, 0));
  } else {
    upload(*window_memory_, window_host_accessible_, integer_image(elements, element, [&](std::size_t k) {
             return rma::initial_target_value(k, seed_of(rank_, 0));
           }));
  }
}

void OneSided::create_window() {
  const std::size_t window_bytes = is_target(rank_) ? span() : 0;
  std::string refusal;
  if (creation_ == WindowCreation::create) {
    void* base = window_memory_ ? window_memory_->data() : nullptr;
    const auto size = static_cast<MPI_Aint>(window_bytes);
    refusal = mpi_refusal(comm_, "MPI_Win_create over " + kind_name_ + " memory",
                          [&] { return MPI_Win_create(base, size, 1, MPI_INFO_NULL, comm_, &win_); });
  } else {
    void* base = nullptr;
    // Asked for whole multiples of 64 bytes (the operations reach the first `window_bytes` only): MPICH 4.0's
    // shared-memory windows misplace a window whose size is not a multiple of 16 bytes at the origin (a put to
    // rank 1 lands in rank 0's window; a 20-line program shows it with Debian's 4.0.2).
    const auto padded = static_cast<MPI_Aint>((window_bytes + kAllocateGranule - 1) / kAllocateGranule * kAllocateGranule);
    refusal = mpi_refusal(comm_, "MPI_Win_allocate",
                          [&] { return MPI_Win_allocate(padded, 1, MPI_INFO_NULL, comm_, &base, &win_); });
    window_host_accessible_ = true;
    if (refusal.empty() && is_target(rank_)) window_memory_ = std::make_unique<LibraryWindowMemory>(base, window_bytes);
  }
  refusal = agree_on_reason(comm_, refusal);
  if (!refusal.empty()) {
    // Freeing a window is collective: one created here while a peer's creation failed cannot be freed, and is
    // left to MPI_Finalize.
    win_ = MPI_WIN_NULL;
    throw Unsupported(refusal);
  }
  // Errors come back to us, as on MPI_COMM_WORLD, so that a failed RMA call is reported with host, rank and call
  // (windows are created with MPI_ERRORS_ARE_FATAL) and the probe can keep it as a refusal.
  GMB_MPI_CHECK(MPI_Win_set_errhandler(win_, MPI_ERRORS_RETURN));
}

void OneSided::probe() {
  tolerating_ = true;
  first_failure_.clear();
  // Flush mode holds one lock for the whole size: the probe takes and releases it once around its iteration
  // (a library may fail only at the unlock), then takes it for the timed iterations.
  const bool holds_lock = sync_ == Sync::flush && is_origin(rank_);
  if (holds_lock) GMB_RMA_CHECK(MPI_Win_lock(MPI_LOCK_SHARED, peer_, 0, win_));
  iterate();
  if (holds_lock) {
    GMB_RMA_CHECK(MPI_Win_unlock(peer_, win_));
    GMB_RMA_CHECK(MPI_Win_lock(MPI_LOCK_SHARED, peer_, 0, win_));
    locked_ = true;
  }
  tolerating_ = false;
  const std::string failure = agree_on_reason(comm_, first_failure_);
  if (!failure.empty()) {
    refused_ = true;
    throw Unsupported(failure);
  }
}

void OneSided::issue(int index) {
  const std::size_t offset = static_cast<std::size_t>(index) * bytes_;
  const auto disp = static_cast<MPI_Aint>(offset);
  auto* origin = static_cast<unsigned char*>(origin_->data()) + offset;
  const int count = static_cast<int>(rma::element_count(op_, bytes_));
  switch (op_) {
    case Op::put:
      GMB_RMA_CHECK(MPI_Put(origin, count, MPI_BYTE, peer_, disp, count, MPI_BYTE, win_));
      return;
    case Op::get:
      GMB_RMA_CHECK(MPI_Get(origin, count, MPI_BYTE, peer_, disp, count, MPI_BYTE, win_));
      return;
    case Op::acc:
      GMB_RMA_CHECK(MPI_Accumulate(origin, count, MPI_INT, peer_, disp, count, MPI_INT, MPI_SUM, win_));
      return;
    case Op::get_acc: {
      auto* result = static_cast<unsigned char*>(result_->data()) + offset;
      GMB_RMA_CHECK(MPI_Get_accumulate(origin, count, MPI_INT, result, count, MPI_INT, peer_, disp, count, MPI_INT,
                                       MPI_SUM, win_));
      return;
    }
    case Op::fop:
      GMB_RMA_CHECK(MPI_Fetch_and_op(origin, result_->data(), MPI_INT64_T, peer_, disp, MPI_SUM, win_));
      return;
    case Op::cas:
      GMB_RMA_CHECK(MPI_Compare_and_swap(origin, compare_->data(), result_->data(), MPI_INT64_T, peer_, disp, win_));
      return;
  }
}

void OneSided::issue_all() {
  for (int k = 0; k < operations_per_iteration(); ++k) issue(k);
}

void OneSided::iterate() {
  switch (shape_) {
    case Shape::latency: return latency_iteration();
    case Shape::one_way_window: return one_way_iteration();
    case Shape::both_ways_window: return both_ways_iteration();
  }
}

// The passive modes: rank 0's operations and their synchronisation (flush: MPI_Win_flush under the size's lock;
// lock: MPI_Win_lock and MPI_Win_unlock around them); rank 1 makes no call.
void OneSided::passive_iteration() {
  if (rank_ != 0) return;
  if (sync_ == Sync::lock) GMB_RMA_CHECK(MPI_Win_lock(MPI_LOCK_SHARED, peer_, 0, win_));
  issue_all();
  if (sync_ == Sync::lock) GMB_RMA_CHECK(MPI_Win_unlock(peer_, win_));
  else GMB_RMA_CHECK(MPI_Win_flush(peer_, win_));
}

// PSCW: this rank's access epoch on its peer's window (its operations between MPI_Win_start and
// MPI_Win_complete), and the exposure epoch of its own window to the peer (MPI_Win_post, MPI_Win_wait).
void OneSided::access_epoch() {
  GMB_RMA_CHECK(MPI_Win_start(peer_group_, 0, win_));
  issue_all();
  GMB_RMA_CHECK(MPI_Win_complete(win_));
}

void OneSided::exposure_epoch() {
  GMB_RMA_CHECK(MPI_Win_post(peer_group_, 0, win_));
  GMB_RMA_CHECK(MPI_Win_wait(win_));
}

// OMB's osu_*_latency: passive modes time rank 0's operation and its synchronisation (rank 1 makes no call);
// fence and pscw are round trips, rank 0's operation in one epoch and rank 1's in the next.
void OneSided::latency_iteration() {
  switch (sync_) {
    case Sync::flush:
    case Sync::lock:
      return passive_iteration();
    case Sync::fence:
      GMB_RMA_CHECK(MPI_Win_fence(0, win_));
      if (rank_ == 0) issue_all();
      GMB_RMA_CHECK(MPI_Win_fence(0, win_));
      if (rank_ == 1) issue_all();
      GMB_RMA_CHECK(MPI_Win_fence(0, win_));
      return;
    case Sync::pscw:
      if (rank_ == 0) {
        access_epoch();
        exposure_epoch();
      } else {
        exposure_epoch();
        access_epoch();
      }
      return;
  }
}

// OMB's osu_put_bw / osu_get_bw: a window of operations from rank 0, then its synchronisation.
void OneSided::one_way_iteration() {
  switch (sync_) {
    case Sync::flush:
    case Sync::lock:
      return passive_iteration();
    case Sync::fence:
      GMB_RMA_CHECK(MPI_Win_fence(0, win_));
      if (rank_ == 0) issue_all();
      GMB_RMA_CHECK(MPI_Win_fence(0, win_));
      return;
    case Sync::pscw:
      return rank_ == 0 ? access_epoch() : exposure_epoch();
  }
}

// OMB's osu_put_bibw: both ranks send a window of operations to each other at once.
void OneSided::both_ways_iteration() {
  switch (sync_) {
    case Sync::flush:
      issue_all();
      GMB_RMA_CHECK(MPI_Win_flush(peer_, win_));
      return;
    case Sync::lock:
      GMB_RMA_CHECK(MPI_Win_lock(MPI_LOCK_SHARED, peer_, 0, win_));
      issue_all();
      GMB_RMA_CHECK(MPI_Win_unlock(peer_, win_));
      return;
    case Sync::fence:
      GMB_RMA_CHECK(MPI_Win_fence(0, win_));
      issue_all();
      GMB_RMA_CHECK(MPI_Win_fence(0, win_));
      return;
    case Sync::pscw:
      GMB_RMA_CHECK(MPI_Win_post(peer_group_, 0, win_));
      GMB_RMA_CHECK(MPI_Win_start(peer_group_, 0, win_));
      issue_all();
      GMB_RMA_CHECK(MPI_Win_complete(win_));
      GMB_RMA_CHECK(MPI_Win_wait(win_));
      return;
  }
}

template <typename Body>
void OneSided::with_own_window(Body&& body) {
  if (!rma::passive(sync_)) return body();
  GMB_MPI_CHECK(MPI_Win_lock(MPI_LOCK_SHARED, rank_, 0, win_));
  body();
  GMB_MPI_CHECK(MPI_Win_unlock(rank_, win_));
}

void OneSided::upload(Buffer& b, bool host_accessible, const std::vector<unsigned char>& image) const {
  if (image.empty()) return;
  if (host_accessible) std::memcpy(b.data(), image.data(), image.size());
  else platform_->gpu->copy(b.data(), image.data(), image.size());
}

std::vector<unsigned char> OneSided::download(const Buffer& b, bool host_accessible, std::size_t bytes) const {
  std::vector<unsigned char> image(bytes);
  if (bytes == 0) return image;
  if (host_accessible) std::memcpy(image.data(), b.data(), bytes);
  else platform_->gpu->copy(image.data(), b.data(), bytes);
  return image;
}

void OneSided::prepare(std::uint32_t seed) {
  // Passive target: the target makes no call in an iteration, so it may leave the last timed sample while the
  // origin's operations are still landing in its window; the origin reaches the barrier only after its flush or
  // unlock completed them.
  if (rma::passive(sync_)) GMB_MPI_CHECK(MPI_Barrier(comm_));
  const std::size_t elements = span() / op().element_bytes;
  const std::size_t element = op().element_bytes;
  if (is_origin(rank_)) {
    if (op_ == Op::put) {
      origin_->fill(span(), seed_of(rank_, seed));
    } else if (op_ == Op::get) {
      origin_->poison(span(), seed_of(peer_, seed));
    } else {
      upload(*origin_, host_accessible_,
             integer_image(elements, element, [&](std::size_t k) { return rma::operand_value(k, seed_of(rank_, seed)); }));
      if (result_) upload(*result_, host_accessible_, integer_image(elements, element, [](std::size_t) { return rma::kUnfetched; }));
      if (compare_)
        upload(*compare_, host_accessible_,
               integer_image(1, element, [&](std::size_t) { return rma::initial_target_value(0, seed_of(peer_, seed)); }));
    }
  }
  if (!is_target(rank_)) return;
  with_own_window([&] {
    if (op_ == Op::put) {
      window_memory_->poison(span(), seed_of(peer_, seed));
    } else if (op_ == Op::get) {
      window_memory_->fill(span(), seed_of(rank_, seed));
    } else {
      upload(*window_memory_, window_host_accessible_, integer_image(elements, element, [&](std::size_t k) {
               return rma::initial_target_value(k, seed_of(rank_, seed));
             }));
    }
  });
}

std::string OneSided::verify(std::uint32_t seed) {
  // Passive target: the origin's flush or unlock completed its operations at the target before it reached the
  // barrier; the target made no call in the iteration.
  if (rma::passive(sync_)) GMB_MPI_CHECK(MPI_Barrier(comm_));
  std::string error;
  if (is_target(rank_)) with_own_window([&] { error = check_window(seed); });
  if (error.empty() && is_origin(rank_)) error = check_fetched(seed);
  return error;
}

std::string OneSided::check_elements(const Buffer& buffer, bool buffer_host_accessible, int operand_rank,
                                     int target_rank, Result result, std::uint32_t seed, const std::string& where) {
  const std::size_t element = op().element_bytes, elements = span() / element;
  const std::vector<unsigned char> image = download(buffer, buffer_host_accessible, span());
  for (std::size_t k = 0; k < elements; ++k) {
    const rma::Expected outcome = rma::expected_after(op_, rma::operand_value(k, seed_of(operand_rank, seed)),
                                                     rma::initial_target_value(k, seed_of(target_rank, seed)));
    const std::int64_t want = result == Result::target ? outcome.target : outcome.fetched;
    const std::int64_t got = element_of(image, element, k);
    if (got != want)
      return where + "element " + std::to_string(k) + " of " + std::to_string(elements) + " is " + std::to_string(got) +
             ", expected " + std::to_string(want);
  }
  return "";
}

std::string OneSided::check_window(std::uint32_t seed) {
  const std::string where = "rank " + std::to_string(rank_) + "'s window after " + op().call + " from rank " +
                            std::to_string(peer_) + ": ";
  if (op_ == Op::put || op_ == Op::get) {
    // get leaves the target's data as it was.
    const std::uint32_t expected = op_ == Op::put ? seed_of(peer_, seed) : seed_of(rank_, seed);
    if (auto bad = window_memory_->first_mismatch(span(), expected))
      return where + "first bad byte at offset " + std::to_string(*bad) + " of " + std::to_string(span());
    return "";
  }
  return check_elements(*window_memory_, window_host_accessible_, peer_, rank_, Result::target, seed, where);
}

std::string OneSided::check_fetched(std::uint32_t seed) {
  const std::string where = "rank " + std::to_string(rank_) + "'s " + op().call + " from rank " +
                            std::to_string(peer_) + " fetched wrong data: ";
  if (op_ == Op::get) {
    if (auto bad = origin_->first_mismatch(span(), seed_of(peer_, seed)))
      return where + "first bad byte at offset " + std::to_string(*bad) + " of " + std::to_string(span());
    return "";
  }
  if (!op().has_result_buffer) return "";
  return check_elements(*result_, host_accessible_, rank_, peer_, Result::fetched, seed, where);
}

void OneSided::teardown() {
  if (win_ != MPI_WIN_NULL) {
    // After a refusal the window may be in any state: release what the library lets us, ignoring its errors.
    tolerating_ = refused_;
    if (locked_) GMB_RMA_CHECK(MPI_Win_unlock(peer_, win_));
    GMB_RMA_CHECK(MPI_Win_free(&win_));
    tolerating_ = false;
  }
  win_ = MPI_WIN_NULL;
  locked_ = refused_ = false;
  if (peer_group_ != MPI_GROUP_NULL) GMB_MPI_CHECK(MPI_Group_free(&peer_group_));
  peer_group_ = MPI_GROUP_NULL;
  origin_.reset();
  result_.reset();
  compare_.reset();
  window_memory_.reset();
}

void OneSided::set_figures(Json& record, const std::vector<double>& seconds, double time_scale, double bytes_per_iteration) {
  record.set("time_us", summarize_transformed(seconds, [&](double s) { return s * time_scale * 1e6; }).to_json());
  if (bytes_per_iteration > 0)
    record.set("bandwidth_GBps",
               summarize_transformed(seconds, [&](double s) { return bytes_per_iteration / s / 1e9; }).to_json());
}

// What one iteration's synchronisation is, for the records' metrics.
std::string synchronisation_words(Sync sync) {
  switch (sync) {
    case Sync::flush: return "MPI_Win_flush (inside one MPI_Win_lock for the whole size)";
    case Sync::lock: return "MPI_Win_lock / MPI_Win_unlock";
    case Sync::fence: return "MPI_Win_fence";
    case Sync::pscw: return "MPI_Win_start / complete at the origin, MPI_Win_post / wait at the target";
  }
  return "";
}

class RmaLatency final : public OneSided {
 public:
  RmaLatency() : OneSided(Shape::latency, {Op::put, Op::get, Op::acc, Op::get_acc, Op::fop, Op::cas}) {}
  std::vector<TableColumn> columns() const override {
    return {{"median_us", "time_us.median", 2}, {"min_us", "time_us.min", 2}, {"p95_us", "time_us.p95", 2}};
  }
  void describe_result(Json& record, std::size_t, const std::vector<double>& seconds) override {
    add_path(record);
    const std::string call = op().call;
    if (rma::passive(sync_)) {
      set_figures(record, seconds, 1, 0);
      record.set("metrics", Json::object().set("time_us", "rank 0's " + call + " and its synchronisation, " +
                                                              synchronisation_words(sync_) + "; rank 1 makes no call"));
    } else {
      // A round trip: rank 0's operation in one epoch, then rank 1's in the next.
      set_figures(record, seconds, 0.5, 0);
      record.set("metrics", Json::object().set("time_us", "one-way: (rank 0's " + call + " in one epoch, then rank 1's in "
                                                          "the next, " + synchronisation_words(sync_) + ") / 2"));
    }
  }
};

class RmaBandwidth final : public OneSided {
 public:
  RmaBandwidth() : OneSided(Shape::one_way_window, {Op::put, Op::get, Op::acc}) {}
  std::vector<TableColumn> columns() const override {
    return {{"GB/s", "bandwidth_GBps.median", 3}, {"p5_GB/s", "bandwidth_GBps.p5", 3}, {"window_us", "time_us.median", 2}};
  }
  void describe_result(Json& record, std::size_t bytes, const std::vector<double>& seconds) override {
    add_path(record);
    set_figures(record, seconds, 1, static_cast<double>(bytes) * window_);
    record.set("metrics", Json::object()
                              .set("time_us", "time per window: rank 0's " + std::to_string(window_) + " " + op().call +
                                                  " and their synchronisation, " + synchronisation_words(sync_))
                              .set("bandwidth_GBps", "bytes * window / time, 1e9 bytes/s"));
  }
};

class RmaBiBandwidth final : public OneSided {
 public:
  RmaBiBandwidth() : OneSided(Shape::both_ways_window, {Op::put, Op::acc}) {}
  std::vector<TableColumn> columns() const override {
    return {{"GB/s", "bandwidth_GBps.median", 3}, {"p5_GB/s", "bandwidth_GBps.p5", 3}, {"window_us", "time_us.median", 2}};
  }
  void describe_result(Json& record, std::size_t bytes, const std::vector<double>& seconds) override {
    add_path(record);
    set_figures(record, seconds, 1, 2.0 * static_cast<double>(bytes) * window_);
    record.set("metrics", Json::object()
                              .set("time_us", "time per window: each rank's " + std::to_string(window_) + " " + op().call +
                                                  " to the other at once and their synchronisation, " +
                                                  synchronisation_words(sync_))
                              .set("bandwidth_GBps", "2 * bytes * window / time, 1e9 bytes/s"));
  }
};

const Registration rma_latency_registration(
    {"rma_latency", "one-sided (MPI-3 RMA) latency between 2 ranks: put, get, acc, get_acc, fop, cas", 2, 2, false,
     [] { return std::make_unique<RmaLatency>(); }, {Family::rma, {Statistic::time_us}, Statistic::time_us}});
const Registration rma_bw_registration(
    {"rma_bw", "one-sided (MPI-3 RMA) bandwidth, a window of put, get or acc from rank 0", 2, 2, false,
     [] { return std::make_unique<RmaBandwidth>(); },
     {Family::rma, {Statistic::time_us, Statistic::bandwidth_GBps}, Statistic::bandwidth_GBps}, Directions::uni});
const Registration rma_bibw_registration(
    {"rma_bibw", "one-sided (MPI-3 RMA) bi-directional bandwidth, windows of put or acc both ways at once", 2, 2,
     false, [] { return std::make_unique<RmaBiBandwidth>(); },
     {Family::rma, {Statistic::time_us, Statistic::bandwidth_GBps}, Statistic::bandwidth_GBps}, Directions::bi});

}  // namespace

}  // namespace gmb
