// SPDX-License-Identifier: BSD-3-Clause
// The halo-exchange mini-app (docs/halo.md defines every number it reports).
//
// A 2D or 3D Jacobi star stencil on a Cartesian grid of ranks: each step exchanges the faces of
// width H with the 4 or 6 neighbours, then updates the interior. The transfer strategy says how
// faces move (named as the point-to-point strategies where they mean the same: halo::strategies()):
//   staged-pinned      one direction at a time: pack, copy to pinned host, MPI_Sendrecv, copy back, unpack
//   direct             pack every face, hand the packed device buffers to MPI (CUDA-aware libraries only)
//   pipelined          each direction on its own stream: pack + copy of one face overlap the MPI transfer
//                      of another and the copy back + unpack of a third (GPU fields only)
//   pipelined-overlap  the interior update runs while the pipelined exchange moves the halos; the
//                      boundary shell is updated after
// On host memory the field is updated on the CPU: staged-pinned is the per-direction MPI_Sendrecv (nothing
// to stage), direct posts every face at once, pipelined-overlap updates the inner box between posting and
// waiting, and pipelined (which pipelines GPU copies) is refused.
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <limits>
#include <sstream>

#include "gmb/benchmark.hpp"
#include "gmb/error.hpp"
#include "gmb/halo_kernels.hpp"
#include "gmb/overlap.hpp"
#include "gmb/stats.hpp"

namespace gmb {

namespace {

using halo::Box;
using halo::Dtype;
using halo::Layout;

constexpr int kTagBase = 600;        // + the sender's direction
constexpr int kReplayTagBase = 620;  // --validate's replay: + the sender's direction

int mpi_count(std::size_t bytes, const std::string& what) {
  if (bytes > static_cast<std::size_t>(std::numeric_limits<int>::max()))
    throw UsageError(what + " of " + std::to_string(bytes) + " bytes is over the 2 GiB - 1 an MPI count can carry");
  return static_cast<int>(bytes);
}

// Grids of up to 2^20 cells per extent and 2^40 in all: byte counts of fields (and of the whole domain's
// reference, in weak mode the grid times the ranks) then fit 64 bits.
constexpr long kMaxGridExtent = 1L << 20;
constexpr long kMaxGridCells = 1L << 40;

std::vector<long> parse_grid(const std::string& text) {
  const std::string bad = "bad grid '" + text + "' (accepted: NX,NY or NX,NY,NZ, whole numbers from 1 to " +
                          std::to_string(kMaxGridExtent) + ", at most " + std::to_string(kMaxGridCells) +
                          " cells in all)";
  std::vector<long> out;
  long cells = 1;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    errno = 0;
    char* end = nullptr;
    const long v = std::strtol(item.c_str(), &end, 10);
    if (item.empty() || *end != '\0' || errno == ERANGE || v <= 0 || v > kMaxGridExtent) throw UsageError(bad);
    out.push_back(v);
    cells *= v;  // at most 2^40 * 2^20 before the check below: no overflow
    if (cells > kMaxGridCells) throw UsageError(bad);
  }
  if (out.size() < 2 || out.size() > 3) throw UsageError(bad);
  return out;
}

// Where this rank sits: neighbours per direction (MPI_PROC_NULL on a non-periodic edge), its
// interior's global origin and its layout.
struct Decomposition {
  MPI_Comm cart = MPI_COMM_NULL;
  int neighbour[6] = {MPI_PROC_NULL, MPI_PROC_NULL, MPI_PROC_NULL, MPI_PROC_NULL, MPI_PROC_NULL, MPI_PROC_NULL};
  std::array<long, 3> origin{0, 0, 0};
  Layout layout;
  bool has(int d) const { return neighbour[d] != MPI_PROC_NULL; }
};

// A rank's field and the means to exchange its halos and update it. Implemented on the host
// (host and pinned memory) and on the GPU (device and managed memory).
class Domain {
 public:
  explicit Domain(const Decomposition& dec) : dec_(dec), l_(dec.layout) {
    for (int d = 0; d < 2 * l_.dims; ++d) face_bytes_[d] = face_bytes(l_, d);
  }
  // Bytes of the face a rank sends towards direction d.
  static std::size_t face_bytes(const Layout& l, int d) { return halo::send_box(l, d).cells() * halo::element_size(l.dtype); }
  virtual ~Domain() = default;
  // Initial values everywhere, halos included, in both fields; the current field is the first.
  virtual void reset() = 0;
  // Fills the current field's halos from the neighbours; complete on return.
  virtual void exchange(const std::string& strategy) = 0;
  // The stencil over the whole interior, current -> next, complete on return; no swap.
  virtual void update_all() = 0;
  // One Jacobi step: exchange, update, swap; complete on return.
  virtual void step(const std::string& strategy) = 0;
  // The current padded field where the host reads it: the field itself (host memory), or a copy in `scratch`.
  virtual const void* current_on_host(std::vector<unsigned char>& scratch) = 0;
 protected:
  int directions() const { return 2 * l_.dims; }
  int count(int d) const { return static_cast<int>(face_bytes_[d]); }  // checked in configure
  const Decomposition& dec_;
  Layout l_;
  std::size_t face_bytes_[6] = {0, 0, 0, 0, 0, 0};
};

// Halo bytes a rank sends per exchange.
std::size_t bytes_sent(const Decomposition& dec) {
  std::size_t b = 0;
  for (int d = 0; d < 2 * dec.layout.dims; ++d)
    if (dec.has(d)) b += Domain::face_bytes(dec.layout, d);
  return b;
}

// Fills the halos of a host `field` one direction at a time: for each direction d, its face d goes to neighbour d
// while its halo on the opposite side arrives from the opposite neighbour (who sends its face d), packed into
// `send[d]` and received into `recv[opposite]` (host buffers of a face each) by MPI_Sendrecv, tagged tag_base + d.
// Every rank walks d in the same order. The staged-pinned exchange of a host field, and --validate's replay.
void sendrecv_halos(const Decomposition& dec, void* field, void* const send[6], void* const recv[6], int tag_base) {
  const Layout& l = dec.layout;
  auto count = [&](int d) { return dec.has(d) ? static_cast<int>(Domain::face_bytes(l, d)) : 0; };  // checked in configure
  for (int d = 0; d < 2 * l.dims; ++d) {
    const int o = halo::opposite(d);
    if (!dec.has(d) && !dec.has(o)) continue;
    if (dec.has(d)) halo::host_pack(field, l, halo::send_box(l, d), send[d]);
    GMB_MPI_CHECK(MPI_Sendrecv(send[d], count(d), MPI_BYTE, dec.neighbour[d], tag_base + d, recv[o], count(o), MPI_BYTE,
                               dec.neighbour[o], tag_base + d, dec.cart, MPI_STATUS_IGNORE));
    if (dec.has(o)) halo::host_unpack(recv[o], l, halo::recv_box(l, o), field);
  }
}

// Host field: pack, MPI and unpack on the CPU; there is nothing to stage.
class HostDomain final : public Domain {
 public:
  HostDomain(const Decomposition& dec, const MemoryKind& kind, BufferPool& buffers) : Domain(dec) {
    for (auto& f : field_) f = buffers.take(kind, l_.padded_bytes());
    for (int d = 0; d < directions(); ++d) {
      send_[d] = buffers.take(kind, face_bytes_[d]);
      recv_[d] = buffers.take(kind, face_bytes_[d]);
      send_data_[d] = send_[d]->data();
      recv_data_[d] = recv_[d]->data();
    }
  }

  void reset() override {
    for (auto& f : field_) halo::host_initialize(f->data(), l_, dec_.origin);
    current_ = 0;
  }

  void exchange(const std::string& strategy) override {
    if (strategy == "staged-pinned") {
      sendrecv_halos(dec_, cur(), send_data_, recv_data_, kTagBase);
    } else {
      start_exchange();
      finish_exchange();
    }
  }

  void update_all() override { halo::host_stencil(cur(), next(), l_, l_.interior()); }

  void step(const std::string& strategy) override {
    if (strategy == "pipelined-overlap") {
      start_exchange();
      halo::host_stencil(cur(), next(), l_, halo::inner_box(l_));
      finish_exchange();
      for (const Box& b : halo::boundary_boxes(l_)) halo::host_stencil(cur(), next(), l_, b);
    } else {
      exchange(strategy);
      update_all();
    }
    current_ ^= 1;
  }

  const void* current_on_host(std::vector<unsigned char>&) override { return cur(); }

 private:
  void* cur() { return field_[current_]->data(); }
  void* next() { return field_[current_ ^ 1]->data(); }

  void start_exchange() {
    for (int d = 0; d < directions(); ++d) {
      requests_[d] = requests_[6 + d] = MPI_REQUEST_NULL;
      if (!dec_.has(d)) continue;
      // The halo on side d comes from neighbour d, who sent its face on the opposite side.
      GMB_MPI_CHECK(MPI_Irecv(recv_[d]->data(), count(d), MPI_BYTE, dec_.neighbour[d], kTagBase + halo::opposite(d),
                              dec_.cart, &requests_[d]));
    }
    for (int d = 0; d < directions(); ++d) {
      if (!dec_.has(d)) continue;
      halo::host_pack(cur(), l_, halo::send_box(l_, d), send_[d]->data());
      GMB_MPI_CHECK(MPI_Isend(send_[d]->data(), count(d), MPI_BYTE, dec_.neighbour[d], kTagBase + d, dec_.cart,
                              &requests_[6 + d]));
    }
  }

  void finish_exchange() {
    GMB_MPI_CHECK(MPI_Waitall(12, requests_, MPI_STATUSES_IGNORE));
    for (int d = 0; d < directions(); ++d)
      if (dec_.has(d)) halo::host_unpack(recv_[d]->data(), l_, halo::recv_box(l_, d), cur());
  }

  std::unique_ptr<Buffer> field_[2], send_[6], recv_[6];
  void* send_data_[6] = {nullptr, nullptr, nullptr, nullptr, nullptr, nullptr};  // send_[d]->data(), for sendrecv_halos
  void* recv_data_[6] = {nullptr, nullptr, nullptr, nullptr, nullptr, nullptr};
  MPI_Request requests_[12] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL, MPI_REQUEST_NULL, MPI_REQUEST_NULL,
                               MPI_REQUEST_NULL, MPI_REQUEST_NULL, MPI_REQUEST_NULL, MPI_REQUEST_NULL,
                               MPI_REQUEST_NULL, MPI_REQUEST_NULL, MPI_REQUEST_NULL, MPI_REQUEST_NULL};
  int current_ = 0;
};

// GPU field (device or managed memory): faces packed and unpacked by kernels, staged through
// pinned host buffers except for `direct`.
class GpuDomain final : public Domain {
 public:
  GpuDomain(const Decomposition& dec, const MemoryKind& kind, const Platform& platform, BufferPool& buffers)
      : Domain(dec), gpu_(*platform.gpu), kernels_(halo::make_gpu_kernels()) {
    const MemoryKind& pinned = platform.memory.require_by(&MemoryKind::page_locked, "page-locked host memory");
    for (auto& f : field_) f = buffers.take(kind, l_.padded_bytes());
    for (int d = 0; d < directions(); ++d) {
      send_[d] = buffers.take(kind, face_bytes_[d]);
      recv_[d] = buffers.take(kind, face_bytes_[d]);
      stage_send_[d] = buffers.take(pinned, face_bytes_[d]);
      stage_recv_[d] = buffers.take(pinned, face_bytes_[d]);
    }
    compute_ = kernels_->create_stream(false);
    for (int d = 0; d < directions(); ++d) {
      comm_[d] = kernels_->create_stream(true);
      packed_[d] = gpu_.create_event();
    }
  }

  ~GpuDomain() override {
    for (int d = 0; d < directions(); ++d) {
      gpu_.destroy_event(packed_[d]);
      kernels_->destroy_stream(comm_[d]);
    }
    kernels_->destroy_stream(compute_);
  }

  void reset() override {
    std::vector<unsigned char> host(l_.padded_bytes());
    halo::host_initialize(host.data(), l_, dec_.origin);
    gpu_.synchronize();
    for (auto& f : field_) gpu_.copy(f->data(), host.data(), host.size());
    current_ = 0;
  }

  void exchange(const std::string& strategy) override {
    if (strategy == "staged-pinned") exchange_staged();
    else if (strategy == "direct") exchange_direct();
    else exchange_pipelined();  // pipelined, and the exchange that pipelined-overlap hides
  }

  void update_all() override {
    kernels_->stencil(cur(), next(), l_, l_.interior(), compute_);
    gpu_.stream_synchronize(compute_);
  }

  void step(const std::string& strategy) override {
    if (strategy == "pipelined-overlap") {
      // The inner box reads no halo cell: it runs on the low-priority stream while the faces move
      // (pack kernels read the interior, unpack kernels write the halo: no conflict).
      kernels_->stencil(cur(), next(), l_, halo::inner_box(l_), compute_);
      exchange_pipelined();  // returns with every unpack complete
      for (const Box& b : halo::boundary_boxes(l_)) kernels_->stencil(cur(), next(), l_, b, compute_);
      gpu_.stream_synchronize(compute_);
    } else {
      exchange(strategy);
      update_all();
    }
    current_ ^= 1;
  }

  const void* current_on_host(std::vector<unsigned char>& scratch) override {
    gpu_.synchronize();
    scratch.resize(l_.padded_bytes());
    gpu_.copy(scratch.data(), cur(), scratch.size());
    return scratch.data();
  }

 private:
  void* cur() { return field_[current_]->data(); }
  void* next() { return field_[current_ ^ 1]->data(); }

  // Pack, copy to pinned host, MPI_Sendrecv, copy back, unpack: one direction at a time, all on
  // one stream, the host waiting for each copy before MPI.
  void exchange_staged() {
    for (int d = 0; d < directions(); ++d) {
      const int o = halo::opposite(d);
      if (!dec_.has(d) && !dec_.has(o)) continue;
      if (dec_.has(d)) {
        kernels_->pack(cur(), l_, halo::send_box(l_, d), send_[d]->data(), compute_);
        gpu_.copy_async(stage_send_[d]->data(), send_[d]->data(), face_bytes_[d], compute_);
        gpu_.stream_synchronize(compute_);
      }
      GMB_MPI_CHECK(MPI_Sendrecv(stage_send_[d]->data(), dec_.has(d) ? count(d) : 0, MPI_BYTE, dec_.neighbour[d],
                                 kTagBase + d, stage_recv_[o]->data(), dec_.has(o) ? count(o) : 0, MPI_BYTE,
                                 dec_.neighbour[o], kTagBase + d, dec_.cart, MPI_STATUS_IGNORE));
      if (dec_.has(o)) {
        gpu_.copy_async(recv_[o]->data(), stage_recv_[o]->data(), face_bytes_[o], compute_);
        kernels_->unpack(recv_[o]->data(), l_, halo::recv_box(l_, o), cur(), compute_);
      }
    }
    gpu_.stream_synchronize(compute_);
  }

  // Every face packed, then the packed GPU buffers go to MPI as they are.
  void exchange_direct() {
    MPI_Request requests[12];
    std::fill(std::begin(requests), std::end(requests), MPI_REQUEST_NULL);
    for (int d = 0; d < directions(); ++d)
      if (dec_.has(d)) kernels_->pack(cur(), l_, halo::send_box(l_, d), send_[d]->data(), compute_);
    for (int d = 0; d < directions(); ++d)
      if (dec_.has(d))
        GMB_MPI_CHECK(MPI_Irecv(recv_[d]->data(), count(d), MPI_BYTE, dec_.neighbour[d], kTagBase + halo::opposite(d),
                                dec_.cart, &requests[d]));
    gpu_.stream_synchronize(compute_);  // the library reads the packed buffers outside any stream
    for (int d = 0; d < directions(); ++d)
      if (dec_.has(d))
        GMB_MPI_CHECK(MPI_Isend(send_[d]->data(), count(d), MPI_BYTE, dec_.neighbour[d], kTagBase + d, dec_.cart,
                                &requests[6 + d]));
    GMB_MPI_CHECK(MPI_Waitall(12, requests, MPI_STATUSES_IGNORE));
    for (int d = 0; d < directions(); ++d)
      if (dec_.has(d)) kernels_->unpack(recv_[d]->data(), l_, halo::recv_box(l_, d), cur(), compute_);
    gpu_.stream_synchronize(compute_);
  }

  // One stream per direction. Receives are posted first; each face's pack and device-to-host
  // copy are queued on its stream and sent as soon as its event completes; each arriving halo is
  // copied back and unpacked on its own stream. The host loop drives both, so the pack of one
  // face, the copy of another and the MPI transfer of a third proceed together.
  void exchange_pipelined() {
    MPI_Request recvs[6], sends[6];
    bool waiting_to_send[6] = {false, false, false, false, false, false};
    int unsent = 0;
    for (int d = 0; d < 6; ++d) recvs[d] = sends[d] = MPI_REQUEST_NULL;
    for (int d = 0; d < directions(); ++d)
      if (dec_.has(d))
        GMB_MPI_CHECK(MPI_Irecv(stage_recv_[d]->data(), count(d), MPI_BYTE, dec_.neighbour[d],
                                kTagBase + halo::opposite(d), dec_.cart, &recvs[d]));
    for (int d = 0; d < directions(); ++d) {
      if (!dec_.has(d)) continue;
      kernels_->pack(cur(), l_, halo::send_box(l_, d), send_[d]->data(), comm_[d]);
      gpu_.copy_async(stage_send_[d]->data(), send_[d]->data(), face_bytes_[d], comm_[d]);
      gpu_.record_event(packed_[d], comm_[d]);
      waiting_to_send[d] = true;
      ++unsent;
    }
    for (;;) {
      for (int d = 0; d < directions() && unsent > 0; ++d) {
        if (waiting_to_send[d] && gpu_.event_done(packed_[d])) {
          GMB_MPI_CHECK(MPI_Isend(stage_send_[d]->data(), count(d), MPI_BYTE, dec_.neighbour[d], kTagBase + d,
                                  dec_.cart, &sends[d]));
          waiting_to_send[d] = false;
          --unsent;
        }
      }
      int arrived = 0, indices[6];
      GMB_MPI_CHECK(MPI_Testsome(6, recvs, &arrived, indices, MPI_STATUSES_IGNORE));
      if (arrived == MPI_UNDEFINED) {  // every receive has completed
        if (unsent == 0) break;
        continue;
      }
      for (int k = 0; k < arrived; ++k) {
        const int d = indices[k];
        gpu_.copy_async(recv_[d]->data(), stage_recv_[d]->data(), face_bytes_[d], comm_[d]);
        kernels_->unpack(recv_[d]->data(), l_, halo::recv_box(l_, d), cur(), comm_[d]);
      }
    }
    GMB_MPI_CHECK(MPI_Waitall(6, sends, MPI_STATUSES_IGNORE));
    for (int d = 0; d < directions(); ++d) gpu_.stream_synchronize(comm_[d]);
  }

  GpuRuntime& gpu_;
  std::unique_ptr<halo::GpuKernels> kernels_;
  std::unique_ptr<Buffer> field_[2], send_[6], recv_[6], stage_send_[6], stage_recv_[6];
  GpuStream compute_ = nullptr;
  GpuStream comm_[6] = {nullptr, nullptr, nullptr, nullptr, nullptr, nullptr};
  GpuEvent packed_[6] = {nullptr, nullptr, nullptr, nullptr, nullptr, nullptr};
  int current_ = 0;
};

// Whether a memory kind's field is updated on the GPU: memory the GPU owns or migrates (device, managed:
// the kernels run where the data is meant to be used); host and pinned fields are updated on the CPU.
bool computed_on_gpu(const MemoryKind& kind) { return kind.gpu_backed; }

class Halo final : public Benchmark {
 public:
  void add_options(ArgParser& p) override {
    p.value({"--dims"}, "2|3", "dimensions of the domain (default 3)", [this](const std::string& v) { dims_text_ = v; });
    p.value({"--grid"}, "NX,NY[,NZ]",
            "interior cells per rank (weak mode) or of the whole domain (strong mode); default 128^3 (3D), 1024^2 (2D)",
            [this](const std::string& v) { grid_ = parse_grid(v); });
    p.value({"--halo"}, "H", "halo width = stencil radius (default 1: 5-point 2D / 7-point 3D Jacobi)",
            [this](const std::string& v) { halo_ = parse_positive_int(v, "halo width"); });
    p.value({"--dtype"}, "float|double", "element type (default double)", [this](const std::string& v) {
      dtype_ = parse_choice(v, {"float", "double"}, "element type") == "float" ? Dtype::f32 : Dtype::f64;
    });
    p.value({"--mem"}, "KIND", "memory kind of the field: host, pinned (CPU update), device, managed (GPU update); default host",
            [this](const std::string& v) { mem_ = v; });
    p.choice({"--strategy"}, {"staged-pinned", "direct", "pipelined", "pipelined-overlap", "all", "staged", "overlap"},
             "strategy",
             "how halos move (default staged-pinned; staged and overlap: the former spellings of staged-pinned and "
             "pipelined-overlap); all: each supported one, with speed-up over staged-pinned",
             [this](const std::string& v) { strategy_text_ = v; });
    p.flag({"--periodic"}, "periodic boundaries (default: fixed boundary values)", &periodic_);
    p.value({"--mode"}, "weak|strong", "weak: --grid per rank (default); strong: --grid is the global domain",
            [this](const std::string& v) { strong_ = parse_choice(v, {"weak", "strong"}, "scaling mode") == "strong"; });
    p.value({"--steps"}, "N", "timed Jacobi steps per strategy (default 100; warm-up steps: --warmup)",
            [this](const std::string& v) { steps_ = parse_positive_int(v, "step count"); });
  }

  void configure(const std::vector<std::string>& positionals, int world_size, const Platform& platform) override {
    if (!positionals.empty()) throw UsageError("halo takes no positional arguments, got '" + positionals[0] + "'");
    if (dims_text_ != "2" && dims_text_ != "3") throw UsageError("bad --dims '" + dims_text_ + "' (accepted: 2, 3)");
    dims_ = dims_text_ == "2" ? 2 : 3;
    if (grid_.empty()) grid_ = dims_ == 2 ? std::vector<long>{1024, 1024} : std::vector<long>{128, 128, 128};
    if (static_cast<int>(grid_.size()) != dims_)
      throw UsageError("--grid has " + std::to_string(grid_.size()) + " extents but --dims " + std::to_string(dims_) +
                       " needs " + std::to_string(dims_));
    strategy_ = strategy_text_ == "all" ? "all" : halo::canonical_strategy(strategy_text_);
    if (strategy_.empty()) {
      std::string accepted, former;
      for (const halo::Strategy& s : halo::strategies()) {
        accepted += std::string(s.name) + ", ";
        if (s.former_name) former += std::string(former.empty() ? "" : ", ") + s.former_name + " for " + s.name;
      }
      throw UsageError("unknown strategy '" + strategy_text_ + "' (accepted: " + accepted + "all; former spellings: " +
                       former + ")");
    }
    platform.memory.known(mem_);

    int pdims[3] = {0, 0, 0};
    GMB_MPI_CHECK(MPI_Dims_create(world_size, dims_, pdims));
    ranks_grid_ = {pdims[0], pdims[1], dims_ == 3 ? pdims[2] : 1};
    for (int a = 0; a < 3; ++a) {
      const long g = a < dims_ ? grid_[a] : 1;
      global_[a] = strong_ ? g : g * ranks_grid_[a];
    }
    // The halo may not be wider than any rank's interior: the face sent is `halo` layers deep.
    static const char* axis_names[] = {"x", "y", "z"};
    for (int a = 0; a < dims_; ++a) {
      const long smallest = global_[a] / ranks_grid_[a];
      if (smallest < halo_)
        throw UsageError("--halo " + std::to_string(halo_) + " is wider than the grid: along " + axis_names[a] +
                         " a rank has " + std::to_string(smallest) + " interior cells (" +
                         (strong_ ? "global " + std::to_string(global_[a]) + " over " : "per rank, ") +
                         std::to_string(ranks_grid_[a]) + " ranks along " + axis_names[a] + ")");
    }
    // Every face must fit one MPI count (the largest local extents give the largest faces).
    std::array<long, 3> largest{1, 1, 1};
    for (int a = 0; a < dims_; ++a) largest[a] = (global_[a] + ranks_grid_[a] - 1) / ranks_grid_[a];
    const Layout l = Layout::make(dims_, halo_, largest, dtype_);
    for (int d = 0; d < 2 * dims_; ++d)
      mpi_count(halo::send_box(l, d).cells() * halo::element_size(dtype_), "a face");
  }

  Json options_json() const override {
    return Json::object()
        .set("dims", dims_)
        .set("grid", Json::array_of(grid_))
        .set("halo", halo_)
        .set("dtype", halo::to_string(dtype_))
        .set("mem", mem_)
        .set("strategy", strategy_)
        .set("periodic", periodic_)
        .set("mode", strong_ ? "strong" : "weak")
        .set("steps", steps_);
  }

  std::vector<TableColumn> columns() const override {
    return {{"step_us", "time_us.median", 2},
            {"exchange_us", "metrics.exchange_us.median", 2},
            {"compute_us", "metrics.compute_us.median", 2},
            {"overlap_%", "metrics.overlap_pct", 1},
            {"vs_staged_pinned", "metrics.speedup_vs_staged_pinned", 2}};
  }

  int run(Context& ctx, RecordSink& sink) override;

 private:
  std::string refusal(const Context& ctx, const std::string& strategy) const;
  SizeNeeds needs(const Context& ctx, const Decomposition& dec, const MemoryKind& kind) const;
  Decomposition decompose(const Context& ctx) const;
  Json base_record(const Context& ctx, const std::string& strategy, std::size_t bytes) const;
  Json geometry(const Decomposition& dec) const;
  std::string validate(const Context& ctx, const Decomposition& dec, Domain& domain, double tolerance, Json& details);
  std::unique_ptr<Domain> build_domain(const Context& ctx, const Decomposition& dec, std::string& problem) const;
  void write_refused(const Context& ctx, RecordSink& sink, const std::string& strategy, std::size_t bytes,
                     const std::string& reason, const Json& shape) const;
  int measure_strategy(const Context& ctx, RecordSink& sink, const Decomposition& dec, Domain& domain,
                       const std::string& strategy, std::size_t bytes, const Json& shape, double& staged_pinned_median);

  std::string dims_text_ = "3";
  int dims_ = 3;
  std::vector<long> grid_;
  int halo_ = 1;
  Dtype dtype_ = Dtype::f64;
  std::string mem_ = "host";
  std::string strategy_text_ = "staged-pinned";  // as given
  std::string strategy_ = "staged-pinned";       // its canonical name, or all
  bool periodic_ = false, strong_ = false;
  int steps_ = 100;
  std::array<int, 3> ranks_grid_{1, 1, 1};
  std::array<long, 3> global_{1, 1, 1};
  std::unique_ptr<halo::Replay> replay_;  // --validate: this rank's replay, run for the first strategy validated
  std::string replay_error_;              // what its first exchange found wrong, or ""
};

std::string Halo::refusal(const Context& ctx, const std::string& strategy) const {
  const MemoryKind* kind = ctx.platform->memory.find(mem_);
  if (!kind->available()) return "memory kind '" + mem_ + "' is not available: " + kind->unavailable_reason;
  const bool on_gpu = computed_on_gpu(*kind);
  if (on_gpu && !ctx.platform->gpu)
    return "a " + mem_ + " field is updated on the GPU, and there is none: " + ctx.platform->gpu_unavailable_reason;
  if (strategy == "pipelined" && !on_gpu)
    return "pipelined overlaps GPU packing, copies and MPI on per-direction streams: with a " + mem_ +
           " field there are no copies to pipeline (use --mem device or managed)";
  if (strategy != "direct") return "";
  const std::string refusal = device_pointer_refusal(*kind, *ctx.awareness);
  return refusal.empty() ? ""
                         : refusal + "; staged-pinned, pipelined and pipelined-overlap stage through pinned host buffers "
                                     "and still run";
}

// What the domain allocates (both fields, a send and a receive buffer per face, on the GPU pinned staging
// per face), the host copies of the field it makes (the GPU field's initial values and, with --validate, its
// state) and, with --validate, the rank's replay of its subdomain (two host fields and its face buffers).
SizeNeeds Halo::needs(const Context& ctx, const Decomposition& dec, const MemoryKind& kind) const {
  SizeNeeds n;
  const Layout& l = dec.layout;
  const bool on_gpu = computed_on_gpu(kind);
  std::uint64_t faces = 0;
  for (int d = 0; d < 2 * dims_; ++d) faces += Domain::face_bytes(l, d);
  n.add("2 fields", 2 * static_cast<std::uint64_t>(l.padded_bytes()), kind);
  n.add("face buffers", 2 * faces, kind);
  if (on_gpu) {
    n.add("pinned face staging", 2 * faces, MemorySide::host);
    n.add("host image of the field", l.padded_bytes(), MemorySide::host);
  }
  if (ctx.settings->validate) {
    n.add("validation replay", 2 * static_cast<std::uint64_t>(l.padded_bytes()) + 2 * faces, MemorySide::host);
    if (on_gpu) n.add("field copy for validation", l.padded_bytes(), MemorySide::host);
  }
  return n;
}

Decomposition Halo::decompose(const Context& ctx) const {
  Decomposition dec;
  int pdims[3] = {ranks_grid_[0], ranks_grid_[1], ranks_grid_[2]};
  int periods[3] = {periodic_, periodic_, periodic_};
  // reorder = 0: world ranks keep their GPUs (chosen from the local rank before MPI_Init).
  GMB_MPI_CHECK(MPI_Cart_create(ctx.comm, dims_, pdims, periods, 0, &dec.cart));
  GMB_MPI_CHECK(MPI_Comm_set_errhandler(dec.cart, MPI_ERRORS_RETURN));
  int rank = 0, coords[3] = {0, 0, 0};
  GMB_MPI_CHECK(MPI_Comm_rank(dec.cart, &rank));
  GMB_MPI_CHECK(MPI_Cart_coords(dec.cart, rank, dims_, coords));
  std::array<long, 3> n{1, 1, 1};
  for (int a = 0; a < dims_; ++a) {
    const halo::Range r = halo::block_range(global_[a], ranks_grid_[a], coords[a]);
    dec.origin[a] = r.offset;
    n[a] = r.count;
    GMB_MPI_CHECK(MPI_Cart_shift(dec.cart, a, 1, &dec.neighbour[2 * a], &dec.neighbour[2 * a + 1]));
  }
  dec.layout = Layout::make(dims_, halo_, n, dtype_);
  return dec;
}

Json Halo::base_record(const Context& ctx, const std::string& strategy, std::size_t bytes) const {
  return result_record(ctx, bytes)
      .set("memory", Json::object().set("field", mem_))
      .set("strategy", strategy)
      .set("ranks", ctx.size);
}

Json Halo::geometry(const Decomposition& dec) const {
  Json local = Json::array(), global = Json::array(), ranks = Json::array();
  for (int a = 0; a < dims_; ++a) {
    local.push(dec.layout.n[a]);
    global.push(global_[a]);
    ranks.push(ranks_grid_[a]);
  }
  return Json::object()
      .set("dims", dims_)
      .set("grid", local)
      .set("global_grid", global)
      .set("halo", halo_)
      .set("dtype", halo::to_string(dtype_))
      .set("ranks_grid", ranks)
      .set("periodic", periodic_)
      .set("mode", strong_ ? "strong" : "weak");
}

// Every rank replays its own subdomain on the host (halo::Replay; once per launch: every strategy starts from the
// same state and runs the same steps), its halos exchanged with the neighbours' replays, and compares its field
// with the replay. Returns "" when this rank's matches within `tolerance` (absolute; values lie in [0, 1)), else
// what it found (the ranks agree on it afterwards). Collective over ctx.comm.
std::string Halo::validate(const Context& ctx, const Decomposition& dec, Domain& domain, double tolerance,
                           Json& details) {
  const double started = host_seconds();
  const int steps = ctx.settings->warmup + steps_;
  if (!replay_) {
    replay_ = std::make_unique<halo::Replay>(dec.layout, dec.origin, global_, periodic_);
    std::vector<unsigned char> faces[12];
    void* send[6] = {nullptr, nullptr, nullptr, nullptr, nullptr, nullptr};
    void* recv[6] = {nullptr, nullptr, nullptr, nullptr, nullptr, nullptr};
    for (int d = 0; d < 2 * dims_; ++d) {
      faces[d].resize(Domain::face_bytes(dec.layout, d));
      faces[6 + d].resize(Domain::face_bytes(dec.layout, d));
      send[d] = faces[d].data();
      recv[d] = faces[6 + d].data();
    }
    replay_error_ =
        replay_->run(steps, [&](void* field) { sendrecv_halos(dec, field, send, recv, kReplayTagBase); });
  }
  std::vector<unsigned char> scratch;
  const halo::Replay::Comparison mine = replay_->compare(domain.current_on_host(scratch), tolerance);
  std::string error = replay_error_.empty() ? mine.first_mismatch : replay_error_;
  if (!error.empty()) error = "rank " + std::to_string(ctx.rank) + ", " + error;
  const double local[2] = {mine.max_abs_error, host_seconds() - started};
  double slowest[2] = {0, 0};
  GMB_MPI_CHECK(MPI_Reduce(local, slowest, 2, MPI_DOUBLE, MPI_MAX, 0, ctx.comm));
  if (ctx.rank == 0)
    details.set("max_abs_error", slowest[0])
        .set("tolerance", tolerance)
        .set("reference", "each rank's host replay of its own subdomain, " + std::to_string(steps) +
                              " steps (warm-up + timed) from the initial values, halos exchanged between the replays "
                              "and checked against the initial values after the first exchange")
        .set("host_seconds", slowest[1]);
  return error;
}

int Halo::run(Context& ctx, RecordSink& sink) {
  std::vector<std::string> strategies{strategy_};
  if (strategy_ == "all") {
    strategies.clear();
    for (const halo::Strategy& s : halo::strategies()) strategies.push_back(s.name);
  }
  if (ctx.rank == 0 && strategy_text_ != strategy_)
    std::fprintf(stderr, "gmb-bench halo: note: --strategy %s is spelled %s, as the point-to-point strategies; records "
                 "carry %s\n", strategy_text_.c_str(), strategy_.c_str(), strategy_.c_str());
  const Decomposition dec = decompose(ctx);
  const Json shape = geometry(dec);
  std::string setup_problem;
  std::unique_ptr<Domain> domain = build_domain(ctx, dec, setup_problem);

  unsigned long long local_bytes = bytes_sent(dec), bytes = 0;
  GMB_MPI_CHECK(MPI_Allreduce(&local_bytes, &bytes, 1, MPI_UNSIGNED_LONG_LONG, MPI_MAX, ctx.comm));

  int exit_code = kExitOk;
  int ran = 0;
  double staged_pinned_median = 0;
  for (std::size_t k = 0; k < strategies.size(); ++k) {
    const std::string& strategy = strategies[k];
    if (deadline_reached(ctx)) {  // a plan's block: the strategies left, one record each
      for (std::size_t left = k; ctx.rank == 0 && left < strategies.size(); ++left)
        sink.write_result(base_record(ctx, strategies[left], bytes)
                              .set("status", "skipped")
                              .set("reason", deadline_reason("this strategy"))
                              .set("metrics", shape));
      break;
    }
    std::string reason = agree_on_reason(ctx.comm, refusal(ctx, strategy));
    if (reason.empty()) reason = setup_problem;
    if (!reason.empty()) {
      write_refused(ctx, sink, strategy, bytes, reason, shape);
      if (strategy_ != "all") exit_code = std::max<int>(exit_code, kExitUnsupported);
      continue;
    }
    ++ran;
    exit_code = std::max(exit_code, measure_strategy(ctx, sink, dec, *domain, strategy, bytes, shape, staged_pinned_median));
  }
  if (ran == 0 && !ctx.deadline_passed) exit_code = std::max<int>(exit_code, kExitUnsupported);
  domain.reset();
  MPI_Comm cart = dec.cart;
  GMB_MPI_CHECK(MPI_Comm_free(&cart));
  return exit_code;
}

// The domain, built once for every strategy; a failure (no GPU kernels, out of memory) refuses all, `problem`
// saying why. Its memory is checked first, collectively, so that a grid too large for this machine is refused,
// not killed.
std::unique_ptr<Domain> Halo::build_domain(const Context& ctx, const Decomposition& dec, std::string& problem) const {
  std::unique_ptr<Domain> domain;
  const MemoryKind* kind = ctx.platform->memory.find(mem_);
  problem = size_verdicts(ctx, {bytes_sent(dec)}, [&](std::size_t) { return needs(ctx, dec, *kind); }).refusals.front();
  if (problem.empty())  // the verdict is the same on every rank
    problem = agreed_refusal(ctx.comm, [&] {
      if (!kind->available() || (computed_on_gpu(*kind) && !ctx.platform->gpu)) return;  // refusal() says why
      if (computed_on_gpu(*kind)) domain = std::make_unique<GpuDomain>(dec, *kind, *ctx.platform, *ctx.buffers);
      else domain = std::make_unique<HostDomain>(dec, *kind, *ctx.buffers);
    });
  return domain;
}

void Halo::write_refused(const Context& ctx, RecordSink& sink, const std::string& strategy, std::size_t bytes,
                         const std::string& reason, const Json& shape) const {
  if (ctx.rank != 0) return;
  if (strategy_ != "all") sink.say_unsupported(reason);
  Json record = base_record(ctx, strategy, bytes);
  record.set("status", "unsupported").set("reason", reason).set("metrics", shape);
  sink.note(strategy + ": unsupported");
  sink.write_result(record);
}

// One strategy: the exchange alone (pure), the update alone (compute), then the steps (overall); the overlap is
// the share of the exchange hidden behind the update.
int Halo::measure_strategy(const Context& ctx, RecordSink& sink, const Decomposition& dec, Domain& domain,
                           const std::string& strategy, std::size_t bytes, const Json& shape,
                           double& staged_pinned_median) {
  overlap::Measurement m(ctx, ctx.settings->warmup, steps_);
  // Each timed step starts after a barrier, as the runner's samples do (methodology.md, Samples): timed back to
  // back, a rank's step would include waiting for a neighbour still in the previous one. The warm-up steps run
  // back to back.
  auto sample = [&](const std::function<void()>& body) {
    for (int k = 0; k < m.warmup(); ++k) body();
    return m.slowest_samples(body);
  };
  domain.reset();
  GMB_MPI_CHECK(MPI_Barrier(ctx.comm));
  const std::vector<double> exchange_s = sample([&] { domain.exchange(strategy); });
  const std::vector<double> compute_s = sample([&] { domain.update_all(); });
  domain.reset();  // the timed steps start from the initial state, so validation has a reference
  GMB_MPI_CHECK(MPI_Barrier(ctx.comm));
  const std::vector<double> step_s = sample([&] { domain.step(strategy); });

  // Halo validates the whole run by a replay, not by checked operations.
  Json validation_details = Json::object();
  if (ctx.settings->validate) {
    // Host arithmetic is reproduced exactly; the GPU repeats it term for term, a few units in the
    // last place are allowed in case a compiler contracts or reorders anyway.
    const bool gpu = computed_on_gpu(*ctx.platform->memory.find(mem_));
    const double tolerance = !gpu ? 0.0 : dtype_ == Dtype::f32 ? 1e-6 : 1e-14;
    m.agree_on_validation(validate(ctx, dec, domain, tolerance, validation_details));
  }
  if (ctx.rank == 0) {
    auto micros = [](const std::vector<double>& s) { return summarize_transformed(s, [](double x) { return x * 1e6; }); };
    const Summary step = micros(step_s), exchange = micros(exchange_s), compute = micros(compute_s);
    if (strategy == "staged-pinned") staged_pinned_median = step.median;
    Json metrics = shape;
    metrics.set("exchange_us", exchange.to_json())
        .set("compute_us", compute.to_json())
        .set("overlap_pct", overlap::percent(step.median, compute.median, exchange.median))
        .set("speedup_vs_staged_pinned", staged_pinned_median > 0 ? Json(staged_pinned_median / step.median) : Json())
        .set("exchange_GBps", exchange.median > 0 ? Json(static_cast<double>(bytes) / (exchange.median * 1e3)) : Json())
        .set("steps", steps_);
    if (ctx.settings->validate) metrics.set("validation", validation_details);
    Json record = base_record(ctx, strategy, bytes);
    m.set_sampling(record, "host clock around one step (exchange + update, GPU work complete), each after a barrier; "
                           "per sample, the slowest rank's");
    sink.note(strategy + ":");
    m.write(sink, record, step_s, metrics, "halo " + strategy);
  }
  return m.exit_code();
}

const Registration halo_registration({"halo", "halo-exchange mini-app: Jacobi stencil on a Cartesian grid of ranks, per strategy",
                                      1, 0, false, [] { return std::make_unique<Halo>(); },
                                      {Family::halo, {Statistic::time_us}, Statistic::time_us}});

}  // namespace

}  // namespace gmb
