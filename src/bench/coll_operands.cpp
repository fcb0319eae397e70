// SPDX-License-Identifier: BSD-3-Clause
// Operands of a collective (shared by `coll` and `nbc`): options, memory kinds per role, buffers,
// and validation images written and read through the host.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "gmb/args.hpp"
#include "gmb/coll_operands.hpp"
#include "gmb/error.hpp"
#include "gmb/known_issues.hpp"
#include "gmb/managed.hpp"

namespace gmb::coll {

namespace {

std::string in_place_operations() {
  std::string s;
  for (const auto& c : collectives())
    if (c.in_place != InPlace::never) s += (s.empty() ? "" : ", ") + std::string(c.name);
  return s;
}

std::string reduction_operations() {
  std::string s;
  for (const auto& c : collectives())
    if (c.reduction) s += (s.empty() ? "" : ", ") + std::string(c.name);
  return s;
}

}  // namespace

void Operands::add_options(ArgParser& p) {
  p.value({"--mem"}, "KIND", "memory kind of every rank's buffers (default host)",
          [this](const std::string& v) { mem_all_ = v; });
  p.value({"--mem-root"}, "KIND", "memory kind of the root rank (overrides --mem there)",
          [this](const std::string& v) { mem_root_explicit_ = v; });
  p.value({"--mem-others"}, "KIND", "memory kind of every rank but the root (overrides --mem there)",
          [this](const std::string& v) { mem_others_explicit_ = v; });
  p.value({"--root"}, "R", "root rank of rooted operations, and the rank --mem-root applies to (default 0)",
          [this](const std::string& v) { root_ = parse_nonnegative_int(v, "root rank"); });
  p.flag({"--in-place", "-l"}, "pass MPI_IN_PLACE where the standard allows it for the operation", &in_place_);
  p.value({"--dtype"}, "float|double|int", "element type of reductions, summed with MPI_SUM (default float)",
          [this](const std::string& v) { dtype_text_ = parse_choice(v, {"float", "double", "int"}, "data type"); });
  // OMB's spellings (docs/omb.md): -k fixed:R (OMB's --root-rank; its rotating root is not measured here),
  // -T MPI_INT|MPI_FLOAT (OMB's --type; gmb reduces float, double or int and moves bytes otherwise).
  p.value({"-k", "--root-rank"}, "fixed:R", "OMB's root rank: fixed:R is --root R",
          [this](const std::string& v) {
            if (v.rfind("fixed:", 0) == 0) root_ = parse_nonnegative_int(v.substr(6), "root rank");
            else if (v == "rotate")
              throw UsageError("OMB's rotating root is not measured by gmb (accepted: fixed:R, or --root R)");
            else throw UsageError("bad root rank '" + v + "' (accepted: fixed:R, e.g. fixed:1, or --root R)");
          });
  p.value({"-T", "--type"}, "MPI_INT|MPI_FLOAT", "OMB's data type of reductions: --dtype int|float",
          [this](const std::string& v) {
            if (v == "MPI_INT") dtype_text_ = "int";
            else if (v == "MPI_FLOAT") dtype_text_ = "float";
            else
              throw UsageError("data type '" + v + "' has no gmb counterpart: gmb reduces float, double or int and "
                               "moves bytes otherwise (accepted: MPI_INT, MPI_FLOAT, or --dtype float|double|int)");
          });
  p.flag({"--run-known-crashes"},
         "run calls this MPI library is known to crash in (refused by default, with the reason: docs/collectives.md)",
         &run_known_crashes_);
}

void Operands::add_transport_option(ArgParser& p) {
  p.value({"--transport"}, "mpi|nccl", "who runs the collective: the MPI library (default) or NCCL (device buffers)",
          [this](const std::string& v) { transport_ = v; });
}

void Operands::add_rotation_option(ArgParser& p) {
  p.flag({"--rotate-offsets"},
         "each call at the next offset of buffers sized for the largest size, as nccl-tests does: no call reads what "
         "an earlier one left in a cache (default: every call on the same buffers, as OSU and most applications)",
         &rotate_offsets_);
}

// The operation `name` asks for. nbc also takes OMB's names of the non-blocking calls ("ialltoall" is alltoall,
// as osu_ialltoall measures MPI_Ialltoall).
static const Collective& named_collective(const std::string& name, bool nonblocking) {
  if (const Collective* exact = find_collective(name)) return *exact;
  const bool omb_name = name.size() > 1 && name[0] == 'i';
  const Collective* c = omb_name ? find_collective(name.substr(1)) : nullptr;
  if (c && c->nonblocking_name) {
    if (nonblocking) return *c;
    throw UsageError("unknown collective '" + name + "': coll measures the blocking " + c->blocking_name +
                     "; the non-blocking " + c->nonblocking_name + " is gmb-bench nbc " + c->name + " (or nbc " + name +
                     ")");
  }
  std::vector<std::string> names;
  for (const auto& c : collectives()) names.push_back(c.name);
  throw UsageError("unknown collective '" + name + "'" + did_you_mean(name, names) + " (accepted: " +
                   collective_names() + (nonblocking ? ", OMB's names with an i (ialltoall)" : "") + ", or all)");
}

void Operands::configure(const std::vector<std::string>& positionals, int world_size, const Platform& platform,
                         const std::string& benchmark) {
  if (positionals.size() != 1)
    throw UsageError("expected one operation: gmb-bench " + benchmark + " OP (accepted: " + collective_names() +
                     ", a comma-separated list of them, or all), got " + std::to_string(positionals.size()) +
                     " positional arguments");
  ops_.clear();
  nonblocking_ = benchmark == "nbc";
  if (positionals[0] == "all") {
    for (const auto& c : collectives()) ops_.push_back(&c);
  } else {
    std::size_t at = 0;
    const std::string& list = positionals[0];
    for (;;) {
      const std::size_t comma = list.find(',', at);
      const std::string name = list.substr(at, comma == std::string::npos ? std::string::npos : comma - at);
      ops_.push_back(&named_collective(name, nonblocking_));
      if (comma == std::string::npos) break;
      at = comma + 1;
    }
  }
  for (const Collective* c : ops_) {
    if (in_place_ && c->in_place == InPlace::never)
      throw UsageError(std::string("--in-place is not allowed for ") + c->name + ": MPI defines no MPI_IN_PLACE form of " +
                       c->blocking_name + " (accepted for: " + in_place_operations() + ")");
  }
  // --dtype applies to the reductions asked for; with none among them it is a mistake.
  if (!dtype_text_.empty() && std::none_of(ops_.begin(), ops_.end(), [](const Collective* c) { return c->reduction; }))
    throw UsageError(std::string("--dtype applies to reductions only (") + reduction_operations() + "); " +
                     ops_.front()->name + " moves bytes");
  parse_choice(transport_, transport_names(), "transport");
  const std::string all = mem_all_.empty() ? "host" : mem_all_;
  mem_root_ = mem_root_explicit_.empty() ? all : mem_root_explicit_;
  mem_others_ = mem_others_explicit_.empty() ? all : mem_others_explicit_;
  spec_root_ = parse_memory_spec(mem_root_, platform.memory);
  spec_others_ = parse_memory_spec(mem_others_, platform.memory);
  managed_ = platform.memory.known(spec_root_.kind).placeable || platform.memory.known(spec_others_.kind).placeable;
  if (placed() && benchmark != "coll")
    throw UsageError("managed placements (KIND:host, KIND:device) are measured by coll; " + benchmark +
                     " takes the kind alone (e.g. --mem managed)");

  if (root_ >= world_size)
    throw UsageError("--root " + std::to_string(root_) + " is not a rank of this launch (ranks 0.." +
                     std::to_string(world_size - 1) + ")");
  select(0);
}

void Operands::select(std::size_t k) {
  op_ = ops_.at(k);
  if (!op_->reduction) dtype_ = Dtype::byte;
  else if (dtype_text_ == "double") dtype_ = Dtype::float64;
  else if (dtype_text_ == "int") dtype_ = Dtype::int32;
  else dtype_ = Dtype::float32;
}

bool Operands::any_data() const {
  for (const Collective* c : ops_)
    if (c->has_data) return true;
  return false;
}

std::vector<std::uint64_t> Operands::plan_sizes(const std::vector<std::uint64_t>& requested, int world_size) {
  sizes_ = op_->has_data ? measured_sizes(*op_, dtype_, requested, world_size) : std::vector<MeasuredSize>{{0, {}}};
  std::vector<std::uint64_t> out;
  for (const MeasuredSize& m : sizes_) out.push_back(m.bytes);
  return out;
}

std::string Operands::rounding_note(int world_size) const {
  if (!op_->has_data) return "";  // barrier: once, whatever the sizes
  std::string moved;
  for (const MeasuredSize& m : sizes_) {
    if (m.requested == std::vector<std::uint64_t>{m.bytes}) continue;
    std::string asked;
    for (const std::uint64_t r : m.requested) asked += (asked.empty() ? "" : ", ") + std::to_string(r);
    moved += (moved.empty() ? "" : "; ") + asked + " B as " + std::to_string(m.bytes) + " B";
  }
  if (moved.empty()) return "";
  const std::uint64_t unit = whole_size(*op_, dtype_, 1, world_size);
  return std::string(op_->name) + " on " + std::to_string(world_size) + " ranks measures whole " +
         (op_->split == Split::equal_blocks ? "blocks" : "elements") + " (multiples of " + std::to_string(unit) +
         " B), at the nearest size: " + moved;
}

Json Operands::options_json() const {
  std::string names;
  for (const Collective* c : ops_) names += (names.empty() ? "" : ",") + std::string(c->name);
  Json o = Json::object()
               .set("operation", names)
               .set("mem_root", mem_root_)
               .set("mem_others", mem_others_)
               .set("root", root_)
               .set("in_place", in_place_)
               .set("dtype", dtype_text_.empty() ? "float" : dtype_text_.c_str())
               .set("transport", transport_)
               .set("rotate_offsets", rotate_offsets_);
  return o;
}

void Operands::describe_configuration(Json& record, int world_size) const {
  record.set("operation", op_->name).set("ranks", world_size).set("transport", transport_);
  record.set("counts", counts_json(*op_));
  if (op_->has_data) record.set("memory", Json::object().set("root", mem_root_).set("others", mem_others_));
  if (op_->has_data && placed())
    record.set("placement", Json::object()
                                .set("root", placement_name(spec_root_.placement))
                                .set("others", placement_name(spec_others_.placement)));
  if (op_->rooted) record.set("root", root_);
  if (op_->in_place != InPlace::never) record.set("in_place", in_place_);
  if (op_->has_data) record.set("dtype", dtype_name(dtype_));
  if (op_->has_data) record.set("buffer_offsets", rotate_offsets_ ? "rotating" : "fixed");
  if (op_->has_data && path_) record.set("path", path_->to_json());
  if (op_->has_data) describe_size(record, world_size);
}

// Sizes follow nccl-tests (docs/collectives.md): bytes is S, the operation's whole buffer as measured, beside the sizes
// asked for that it stands for; equal-block operations also say the block per peer, which is what OSU's benchmarks
// call the size (a size refused has none).
void Operands::describe_size(Json& record, int world_size) const {
  record.set("size_convention", "total");
  const Json* bytes = record.find("bytes");
  if (!bytes) return;
  const auto size = static_cast<std::uint64_t>(bytes->as_number());
  for (const MeasuredSize& m : sizes_)
    if (m.bytes == size) record.set("requested_bytes", Json::array_of(m.requested));
  if (op_->split == Split::equal_blocks && size_problem(*op_, dtype_, size, world_size).empty())
    record.set("bytes_per_peer", size / static_cast<std::uint64_t>(world_size));
}

std::string Operands::unsupported_reason(const Context& ctx) const {
  if (transport_ == "nccl")
    if (std::string problem = nccl_collective_problem(*op_, in_place_); !problem.empty()) return problem;
  if (!op_->has_data) return "";
  const std::string& mine = my_spec(ctx.rank).kind;
  const MemoryKind* kind = ctx.platform->memory.find(mine);
  if (!kind->available()) return "memory kind '" + mine + "' is not available: " + kind->unavailable_reason;
  if (transport_ == "nccl") return nccl_problem(ctx, *kind);
  const std::string refusal = device_pointer_refusal(*kind, *ctx.awareness);
  return refusal.empty() ? "" : refusal + ". Use host or pinned buffers.";
}

std::string Operands::known_crash_here(const Context& ctx, std::size_t bytes) const {
  static const LibraryVersion library = [] {
    char text[MPI_MAX_LIBRARY_VERSION_STRING] = {0};
    int length = 0;
    GMB_MPI_CHECK(MPI_Get_library_version(text, &length));
    return parse_library_version(text);
  }();
  CollectiveCallFacts call;
  call.call = call_name();
  call.nonblocking = nonblocking_;
  call.persistent = persistent_;
  call.reduction = op_->reduction;
  call.device_memory = op_->has_data && (ctx.platform->memory.known(spec_root_.kind).gpu_memory ||
                                         ctx.platform->memory.known(spec_others_.kind).gpu_memory);
  call.device_memory_off_root = op_->has_data && ctx.platform->memory.known(spec_others_.kind).gpu_memory;
  call.in_place = in_place_;
  call.root = root_;
  call.bytes = bytes;
  call.ranks = ctx.size;
  call.block_bytes = layout_.block_elems * dtype_size(dtype_);
  if (const char* vsmall = std::getenv("MPIR_CVAR_GATHER_VSMALL_MSG_SIZE"))
    call.mpich_gather_vsmall_msg_size = std::strtoull(vsmall, nullptr, 10);
  const char* ucc = std::getenv("OMPI_MCA_coll_ucc_enable");
  call.ucc_enabled = ucc && std::string(ucc) == "1";
  return known_crash(library, call);
}

double Operands::op_bytes_for(const Collective& c, Dtype t, std::size_t bytes, int ranks) {
  const std::uint64_t total = bytes / dtype_size(t);
  return static_cast<double>(c.layout(total, 0, ranks, 0, false).op_elems) * static_cast<double>(dtype_size(t));
}

SizeNeeds Operands::needs(const Context& ctx, std::size_t bytes) const {
  SizeNeeds n;
  if (!op_->has_data) return n;
  if (std::string problem = size_problem(*op_, dtype_, bytes, ctx.size); !problem.empty()) {
    n.refuse(problem);
    return n;
  }
  Layout l;
  try {
    l = op_->layout(bytes / dtype_size(dtype_), ctx.rank, ctx.size, root_, in_place_);
  } catch (const Unsupported& e) {
    n.refuse(std::string(e.what()) + " (" + call_name() + ")");
    return n;
  }
  const MemoryKind& kind = ctx.platform->memory.known(my_spec(ctx.rank).kind);
  const std::uint64_t es = dtype_size(dtype_), send_bytes = l.send_elems * es, recv_bytes = l.recv_elems * es;
  const Layout span = rotate_offsets_ ? rotation_span(ctx) : l;
  n.add("send", std::max(send_bytes, span.send_elems * es), kind);
  n.add("recv", std::max(recv_bytes, span.recv_elems * es), kind);
  // prepare() builds the send image, then the receive image, on the host: one at a time.
  n.add("input image", std::max(send_bytes, recv_bytes), MemorySide::host);
  if (ctx.settings->validate) n.add("received copy", recv_bytes, MemorySide::host);
  return n;
}

void Operands::setup(const Context& ctx, std::size_t bytes) {
  platform_ = ctx.platform;
  rank_ = ctx.rank;
  ranks_ = ctx.size;
  total_ = op_->has_data ? bytes / dtype_size(dtype_) : 0;
  layout_ = op_->layout(total_, rank_, ranks_, root_, in_place_);  // throws Unsupported for counts beyond int
  if (transport_ == "mpi" && !run_known_crashes_)
    if (std::string crash = known_crash_here(ctx, bytes); !crash.empty()) throw Unsupported(crash);
  args_ = CallArgs{};
  args_.layout = &layout_;
  args_.type = dtype_mpi(dtype_);
  args_.root = root_;
  args_.rank = rank_;
  args_.in_place = rank_is_in_place(*op_, rank_, root_, in_place_);
  args_.comm = ctx.comm;
  receives_ = false;
  if (!op_->has_data) return;
  if (transport_ == "nccl") nccl_ = ctx.platform->nccl.connect(ctx.comm);
  if (!path_) {
    std::vector<bool> gpu_backed;
    for (int r = 0; r < ctx.size; ++r) gpu_backed.push_back(ctx.platform->memory.known(my_spec(r).kind).gpu_backed);
    path_ = ctx.path_among(gpu_backed);
  }
  kind_ = &ctx.platform->memory.require(my_spec(rank_).kind);
  receives_ = !op_->received(total_, rank_, ranks_, root_, in_place_).empty();
  const std::size_t es = dtype_size(dtype_);
  const std::size_t send_bytes = layout_.send_elems * es, recv_bytes = layout_.recv_elems * es;
  // --rotate-offsets: buffers of the largest size, the calls cycling through positions one call's bytes apart
  // (aligned as allocations are), nccl-tests' way of keeping a call from reading what an earlier one cached.
  const Layout span = rotate_offsets_ ? rotation_span(ctx) : layout_;
  const std::size_t send_span = std::max<std::size_t>(send_bytes, span.send_elems * es);
  const std::size_t recv_span = std::max<std::size_t>(recv_bytes, span.recv_elems * es);
  send_ = ctx.buffers->take(*kind_, send_span);
  recv_ = ctx.buffers->take(*kind_, recv_span);
  constexpr std::size_t kAlignment = 256;
  offset_stride_ = (std::max(send_bytes, recv_bytes) + kAlignment - 1) / kAlignment * kAlignment;
  offsets_ = 1;
  if (rotate_offsets_ && offset_stride_ > 0) {
    std::size_t fit = SIZE_MAX;
    if (send_bytes) fit = std::min(fit, (send_span - send_bytes) / offset_stride_ + 1);
    if (recv_bytes) fit = std::min(fit, (recv_span - recv_bytes) / offset_stride_ + 1);
    offsets_ = fit == SIZE_MAX ? 1 : fit;
  }
  next_offset_ = 0;
  args_.send = send_->data();
  args_.recv = recv_->data();
  // The inputs exist before timing starts, and typed inputs are numbers (never NaN or denormals).
  prepare(0);
}

void Operands::call() {
  if (offsets_ > 1) {
    const std::size_t shift = next_offset_ * offset_stride_;
    args_.send = static_cast<const char*>(send_->data()) + shift;
    args_.recv = static_cast<char*>(recv_->data()) + shift;
    next_offset_ = (next_offset_ + 1) % offsets_;
  }
  if (nccl_) nccl_->collective(*op_, args_, dtype_);
  else op_->call(args_);
}

Layout Operands::rotation_span(const Context& ctx) const {
  std::vector<std::uint64_t> sizes = ctx.settings->sizes;
  std::sort(sizes.rbegin(), sizes.rend());
  for (const std::uint64_t bytes : sizes) {
    try {
      return op_->layout(bytes / dtype_size(dtype_), ctx.rank, ctx.size, root_, in_place_);
    } catch (const Unsupported&) {
      // a size whose counts exceed int is refused on its own; the span is the largest size that can be laid out
    }
  }
  return Layout{};
}

void Operands::complete() const {
  if (nccl_) nccl_->synchronize();
}

std::string Operands::call_name() const {
  if (nonblocking_) return op_->nonblocking_name;
  if (persistent_) return op_->persistent_name;
  return transport_ == "nccl" && op_->nccl.call ? op_->nccl.call : op_->blocking_name;
}

void Operands::upload(Buffer& b, const std::vector<unsigned char>& image) const {
  if (image.empty()) return;
  if (!kind_->host_accessible) platform_->gpu->copy(b.data(), image.data(), image.size());
  else std::memcpy(b.data(), image.data(), image.size());
}

void Operands::download(std::vector<unsigned char>& image, const Buffer& b) const {
  if (image.empty()) return;
  if (!kind_->host_accessible) platform_->gpu->copy(image.data(), b.data(), image.size());
  else std::memcpy(image.data(), b.data(), image.size());
}

void Operands::prepare(std::uint32_t seed) {
  if (!op_->has_data) return;
  next_offset_ = 0;  // the next call works on what is written here
  upload(*send_, make_send_image(*op_, layout_, dtype_, rank_, seed));
  upload(*recv_, make_recv_image(*op_, layout_, dtype_, total_, rank_, ranks_, root_, in_place_, seed));
}

std::string Operands::verify(std::uint32_t seed) {
  if (!op_->has_data) return "";
  scratch_.resize(layout_.recv_elems * dtype_size(dtype_));
  download(scratch_, *recv_);
  return check_received(*op_, dtype_, scratch_.data(), total_, rank_, ranks_, root_, in_place_, seed);
}

void Operands::place_buffers() {
  if (!op_->has_data) return;
  const Placement where = my_spec(rank_).placement;
  send_->place(where, layout_.send_elems * dtype_size(dtype_));
  recv_->place(where, layout_.recv_elems * dtype_size(dtype_));
}

void Operands::settle_received() {
  if (receives_) recv_->place(my_spec(rank_).placement, layout_.recv_elems * dtype_size(dtype_));
}

double Operands::launch_in_my_call(const LaunchCost& cost) const {
  if (!op_->has_data || total_ == 0 || !cost.measured()) return 0;  // no data: no kernel is launched
  const bool touches = receives_ && my_spec(rank_).placement == Placement::device;
  return touches ? cost.seconds.at(static_cast<std::size_t>(rank_)) : 0;
}

void Operands::teardown() {
  nccl_.reset();
  send_.reset();
  recv_.reset();
  scratch_.clear();
  scratch_.shrink_to_fit();
}

}  // namespace gmb::coll
