// SPDX-License-Identifier: BSD-3-Clause
// libgmb-profile: an application's communication, recorded through the MPI profiling interface (PMPI) with no change
// to the application (LD_PRELOAD, or linked before the MPI library). Per call kind, peer (point-to-point) or
// communicator size (collectives), memory kind of the buffer and message size bin: count, bytes, time in the call
// and, for non-blocking calls, the time their completion calls waited. Each rank writes
// $GMB_PROFILE_DIR/rank-<world rank>.json at MPI_Finalize; `gmb profile` merges them.
//
// The memory kind is asked of the CUDA driver (cuPointerGetAttributes) when the application has loaded it: a
// process that has not cannot hold device, managed or pinned memory, so its buffers are pageable host memory.
// The profiler never loads CUDA itself (that would change the application's start-up and memory).
#include <mpi.h>

#include <dlfcn.h>
#include <link.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

namespace {

// ------------------------------------------------------------------------------------------------ what is counted
enum class Memory { host, pinned, device, managed };
const char* memory_name(Memory m) {
  switch (m) {
    case Memory::host: return "host";
    case Memory::pinned: return "pinned";
    case Memory::device: return "device";
    case Memory::managed: return "managed";
  }
  return "host";
}

// One row of the profile. peer: the peer's rank in MPI_COMM_WORLD (point-to-point; -1 for MPI_ANY_SOURCE or a
// peer outside MPI_COMM_WORLD); comm_size and comm_hosts: the communicator's ranks and the hosts they run on
// (collectives; 0 for point-to-point). bin: floor(log2(bytes)), -1 for empty messages. device: the CUDA device
// ordinal of the buffer (-1 for host memory). tag: the message tag (point-to-point; -1 for MPI_ANY_TAG, collectives
// and one-sided calls), so that a send is matched with the receives of its own messages when one peer receives
// messages of one size into buffers of several memory kinds.
struct Key {
  const char* call = "";  // a string literal: no allocation per call
  int peer = -1;
  int comm_size = 0;
  int comm_hosts = 0;
  Memory memory = Memory::host;
  int device = -1;
  int bin = -1;
  int tag = -1;
  bool operator<(const Key& o) const {
    if (int c = std::strcmp(call, o.call)) return c < 0;
    return std::tie(peer, comm_size, comm_hosts, memory, device, bin, tag) <
           std::tie(o.peer, o.comm_size, o.comm_hosts, o.memory, o.device, o.bin, o.tag);
  }
};

struct Tally {
  std::uint64_t count = 0;
  std::uint64_t bytes = 0;
  std::uint64_t min_bytes = UINT64_MAX;
  std::uint64_t max_bytes = 0;
  double call_s = 0;  // time inside the call itself
  double wait_s = 0;  // non-blocking: time its completion calls waited for it
  std::uint64_t waited = 0;
};

double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

int bin_of(std::uint64_t bytes) {
  if (bytes == 0) return -1;
  int b = 0;
  while (bytes >>= 1) ++b;
  return b;
}

// ------------------------------------------------------------------------------------------- CUDA, when loaded
// The driver API's values (cuda.h), declared here so that the profiler builds and runs without a CUDA toolkit.
constexpr int kAttrMemoryType = 2, kAttrIsManaged = 8, kAttrDeviceOrdinal = 9;
constexpr unsigned kMemoryTypeHost = 1, kMemoryTypeDevice = 2;
using PointerAttributes = int (*)(unsigned, int*, void**, unsigned long long);
using DeviceGet = int (*)(int*, int);
using DeviceGetPciBusId = int (*)(char*, int, int);

struct Cuda {
  void* handle = nullptr;
  PointerAttributes attributes = nullptr;
  double next_look = 0;  // when to look again whether the application has loaded the driver

  // Looks for a driver the application loaded, at most every millisecond: a device buffer needs cuInit and an
  // allocation first, which take far longer. The loaded objects are listed in memory (dl_iterate_phdr); dlopen
  // with RTLD_NOLOAD would search the file system for a name not loaded.
  bool loaded(double t) {
    if (attributes) return true;
    if (t < next_look) return false;
    next_look = t + 1e-3;
    bool found = false;
    dl_iterate_phdr(
        [](dl_phdr_info* info, std::size_t, void* seen) {
          const char* base = info->dlpi_name ? std::strrchr(info->dlpi_name, '/') : nullptr;
          if (base && std::strncmp(base + 1, "libcuda.so", 10) == 0) *static_cast<bool*>(seen) = true;
          return 0;
        },
        &found);
    if (found) handle = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
    if (handle) attributes = reinterpret_cast<PointerAttributes>(dlsym(handle, "cuPointerGetAttributes"));
    return attributes != nullptr;
  }
};

// ------------------------------------------------------------------------------------------------- the profile
struct Profile {
  std::mutex lock;
  std::map<Key, Tally> rows;
  // Non-blocking requests not yet completed -> their row. A multimap: a library may hand out one handle for several
  // requests that completed at once (MPICH's lightweight requests for small eager sends).
  std::unordered_multimap<MPI_Request, Key> pending;
  std::map<MPI_Comm, std::vector<int>> world_ranks;  // a communicator's ranks in MPI_COMM_WORLD
  std::map<MPI_Comm, int> hosts_of;
  std::vector<std::string> host_of_rank;  // every world rank's host
  std::set<int> devices_seen;
  Cuda cuda;
  bool cuda_seen = false;
  double init_t = 0;
  double overhead_s = 0;  // the profiler's own bookkeeping, measured
  int world_rank = -1, world_size = 0;
  bool active = false;
  std::string library;
  std::string host;
};

Profile& profile() {
  static Profile* p = new Profile;  // never destroyed: MPI may be finalized from an exit handler
  return *p;
}

void fail(const char* what) {
  std::fprintf(stderr, "gmb-profile: %s (rank %d on %s)\n", what, profile().world_rank, profile().host.c_str());
}

Memory memory_of(Profile& p, const void* buf, int* device, double t) {
  *device = -1;
  if (buf == nullptr || buf == MPI_IN_PLACE || !p.cuda.loaded(t)) return Memory::host;
  unsigned type = 0;
  int managed = 0, ordinal = -1;
  int attrs[3] = {kAttrMemoryType, kAttrIsManaged, kAttrDeviceOrdinal};
  void* data[3] = {&type, &managed, &ordinal};
  if (p.cuda.attributes(3, attrs, data, reinterpret_cast<unsigned long long>(buf)) != 0) return Memory::host;
  p.cuda_seen = true;
  if (type == kMemoryTypeDevice) {
    *device = ordinal;
    p.devices_seen.insert(ordinal);
    return managed ? Memory::managed : Memory::device;
  }
  return type == kMemoryTypeHost ? Memory::pinned : Memory::host;
}

const std::vector<int>& world_ranks_of(Profile& p, MPI_Comm comm) {
  auto it = p.world_ranks.find(comm);
  if (it != p.world_ranks.end()) return it->second;
  std::vector<int> out;
  int size = 0, inter = 0;
  if (PMPI_Comm_test_inter(comm, &inter) == MPI_SUCCESS && !inter && PMPI_Comm_size(comm, &size) == MPI_SUCCESS) {
    MPI_Group group, world;
    std::vector<int> ranks(size);
    for (int i = 0; i < size; ++i) ranks[i] = i;
    out.assign(size, -1);
    if (PMPI_Comm_group(comm, &group) == MPI_SUCCESS && PMPI_Comm_group(MPI_COMM_WORLD, &world) == MPI_SUCCESS) {
      if (PMPI_Group_translate_ranks(group, size, ranks.data(), world, out.data()) != MPI_SUCCESS)
        out.assign(size, -1);
      PMPI_Group_free(&group);
      PMPI_Group_free(&world);
    }
  }
  return p.world_ranks.emplace(comm, std::move(out)).first->second;
}

int hosts_in(Profile& p, MPI_Comm comm) {
  auto it = p.hosts_of.find(comm);
  if (it != p.hosts_of.end()) return it->second;
  std::set<std::string> hosts;
  for (int r : world_ranks_of(p, comm))
    if (r >= 0 && r < static_cast<int>(p.host_of_rank.size())) hosts.insert(p.host_of_rank[r]);
  return p.hosts_of.emplace(comm, static_cast<int>(hosts.size())).first->second;
}

std::uint64_t bytes_of(int count, MPI_Datatype type) {
  int size = 0;
  if (count <= 0 || type == MPI_DATATYPE_NULL || PMPI_Type_size(type, &size) != MPI_SUCCESS || size < 0) return 0;
  return static_cast<std::uint64_t>(count) * static_cast<std::uint64_t>(size);
}

// A call's row: point-to-point (peer in comm) or collective (comm) on this buffer and this many bytes.
Key key_of(Profile& p, const char* call, const void* buf, std::uint64_t bytes, MPI_Comm comm, int peer, int tag,
           bool collective, double t) {
  Key k;
  k.call = call;
  k.tag = tag < 0 ? -1 : tag;
  k.memory = memory_of(p, buf, &k.device, t);
  k.bin = bin_of(bytes);
  if (collective) {
    PMPI_Comm_size(comm, &k.comm_size);
    k.comm_hosts = hosts_in(p, comm);
  } else if (peer >= 0) {
    const auto& ranks = world_ranks_of(p, comm);
    k.peer = peer < static_cast<int>(ranks.size()) ? ranks[peer] : -1;
  }
  return k;
}

void add(Profile& p, const Key& k, std::uint64_t bytes, double call_s) {
  Tally& t = p.rows[k];
  ++t.count;
  t.bytes += bytes;
  t.min_bytes = std::min(t.min_bytes, bytes);
  t.max_bytes = std::max(t.max_bytes, bytes);
  t.call_s += call_s;
}

// Records a finished call: [t0, t1] is the call's own time; bookkeeping after t1 counts as the profiler's overhead.
void record(const char* call, const void* buf, std::uint64_t bytes, MPI_Comm comm, int peer, int tag, bool collective,
            double t0, double t1, MPI_Request* request = nullptr) {
  Profile& p = profile();
  if (!p.active) return;
  std::lock_guard<std::mutex> guard(p.lock);
  Key k = key_of(p, call, buf, bytes, comm, peer, tag, collective, t1);
  add(p, k, bytes, t1 - t0);
  if (request && *request != MPI_REQUEST_NULL) p.pending.emplace(*request, k);
  p.overhead_s += now() - t1;
}

// A completion call's wait, shared among the requests it completed (those that were pending before it and are
// MPI_REQUEST_NULL after); a completed request the profiler did not start is counted under "untracked".
void completed(const std::vector<MPI_Request>& before, const MPI_Request* after, int n, double t0, double t1) {
  Profile& p = profile();
  if (!p.active) return;
  std::lock_guard<std::mutex> guard(p.lock);
  std::vector<Key> done;
  int untracked = 0;
  for (int i = 0; i < n; ++i) {
    if (before[i] == MPI_REQUEST_NULL || after[i] != MPI_REQUEST_NULL) continue;
    auto it = p.pending.find(before[i]);
    if (it == p.pending.end()) {
      ++untracked;
      continue;
    }
    done.push_back(it->second);
    p.pending.erase(it);
  }
  double share = (t1 - t0) / std::max<std::size_t>(1, done.size() + untracked);
  for (const Key& k : done) {
    Tally& t = p.rows[k];
    t.wait_s += share;
    ++t.waited;
  }
  if (untracked) {
    Key k;
    k.call = "wait (requests the profiler did not start)";
    Tally& t = p.rows[k];
    t.count += untracked;
    t.wait_s += share * untracked;
  }
  p.overhead_s += now() - t1;
}

// ---------------------------------------------------------------------------------------------------- the output
std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

std::string device_identity(Profile& p, int ordinal) {
  auto get = p.cuda.handle ? reinterpret_cast<DeviceGet>(dlsym(p.cuda.handle, "cuDeviceGet")) : nullptr;
  auto bus = p.cuda.handle ? reinterpret_cast<DeviceGetPciBusId>(dlsym(p.cuda.handle, "cuDeviceGetPCIBusId")) : nullptr;
  int device = 0;
  char id[64] = "";
  if (!get || !bus || get(&device, ordinal) != 0 || bus(id, sizeof id, device) != 0) return "";
  return id;
}

void write_profile(Profile& p, double finalize_t) {
  const char* dir = std::getenv("GMB_PROFILE_DIR");
  if (!dir || !*dir) {
    if (p.world_rank == 0)
      fail("GMB_PROFILE_DIR is not set: nothing written (run the application through `gmb profile`)");
    return;
  }
  std::string path = std::string(dir) + "/rank-" + std::to_string(p.world_rank) + ".json";
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0644);  // never over a profile already written
  if (fd < 0) {
    fail(("cannot create " + path + ": " + std::strerror(errno)).c_str());
    return;
  }
  FILE* f = fdopen(fd, "w");
  std::fprintf(f, "{\"schema\": \"gmb.profile.rank.v1\", \"rank\": %d, \"world_size\": %d, \"host\": %s, ",
               p.world_rank, p.world_size, quoted(p.host).c_str());
  std::fprintf(f, "\"pid\": %d, \"mpi_library\": %s, \"wall_s\": %.9g, \"profiler_overhead_s\": %.9g, ",
               static_cast<int>(getpid()), quoted(p.library).c_str(), finalize_t - p.init_t, p.overhead_s);
  std::fprintf(f, "\"cuda_loaded\": %s, \"devices\": {", p.cuda.attributes ? "true" : "false");
  bool first = true;
  for (int d : p.devices_seen) {
    std::fprintf(f, "%s\"%d\": {\"pci_bus_id\": %s}", first ? "" : ", ", d, quoted(device_identity(p, d)).c_str());
    first = false;
  }
  std::fprintf(f, "}, \"hosts\": [");
  for (std::size_t r = 0; r < p.host_of_rank.size(); ++r)
    std::fprintf(f, "%s%s", r ? ", " : "", quoted(p.host_of_rank[r]).c_str());
  std::fprintf(f, "], \"rows\": [");
  first = true;
  for (const auto& [k, t] : p.rows) {
    std::fprintf(f, "%s\n {\"call\": %s, \"peer\": %d, \"comm_size\": %d, \"comm_hosts\": %d, \"memory\": \"%s\", "
                    "\"device\": %d, \"bin\": %d, \"tag\": %d, \"count\": %llu, \"bytes\": %llu, \"min_bytes\": %llu, "
                    "\"max_bytes\": %llu, \"call_s\": %.9g, \"wait_s\": %.9g, \"waited\": %llu}",
                 first ? "" : ",", quoted(k.call).c_str(), k.peer, k.comm_size, k.comm_hosts, memory_name(k.memory),
                 k.device, k.bin, k.tag, static_cast<unsigned long long>(t.count), static_cast<unsigned long long>(t.bytes),
                 static_cast<unsigned long long>(t.count ? t.min_bytes : 0),
                 static_cast<unsigned long long>(t.max_bytes), t.call_s, t.wait_s,
                 static_cast<unsigned long long>(t.waited));
    first = false;
  }
  std::fprintf(f, "\n]}\n");
  if (std::fclose(f) != 0) fail(("cannot write " + path + ": " + std::strerror(errno)).c_str());
}

void started() {
  Profile& p = profile();
  p.init_t = now();
  PMPI_Comm_rank(MPI_COMM_WORLD, &p.world_rank);
  PMPI_Comm_size(MPI_COMM_WORLD, &p.world_size);
  char name[MPI_MAX_PROCESSOR_NAME] = "";
  int len = 0;
  PMPI_Get_processor_name(name, &len);
  p.host.assign(name, len);
  char version[MPI_MAX_LIBRARY_VERSION_STRING] = "";
  PMPI_Get_library_version(version, &len);
  p.library.assign(version, len);
  p.library = p.library.c_str();  // some libraries count the terminating NUL
  while (!p.library.empty() && (p.library.back() == '\n' || p.library.back() == ' ')) p.library.pop_back();
  // every rank's host, for a communicator's host count
  std::vector<char> all(static_cast<std::size_t>(p.world_size) * MPI_MAX_PROCESSOR_NAME, '\0');
  char mine[MPI_MAX_PROCESSOR_NAME] = "";
  std::memcpy(mine, name, len);
  if (PMPI_Allgather(mine, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, all.data(), MPI_MAX_PROCESSOR_NAME, MPI_CHAR,
                     MPI_COMM_WORLD) != MPI_SUCCESS) {
    fail("MPI_Allgather of the host names failed: the profile is off");
    return;
  }
  for (int r = 0; r < p.world_size; ++r)
    p.host_of_rank.emplace_back(all.data() + static_cast<std::size_t>(r) * MPI_MAX_PROCESSOR_NAME);
  p.active = true;
}

std::vector<MPI_Request> copy(const MPI_Request* r, int n) { return std::vector<MPI_Request>(r, r + (n > 0 ? n : 0)); }

}  // namespace

// ------------------------------------------------------------------------------------------- the interposed calls
extern "C" {

int MPI_Init(int* argc, char*** argv) {
  int rc = PMPI_Init(argc, argv);
  if (rc == MPI_SUCCESS) started();
  return rc;
}

int MPI_Init_thread(int* argc, char*** argv, int required, int* provided) {
  int rc = PMPI_Init_thread(argc, argv, required, provided);
  if (rc == MPI_SUCCESS) started();
  return rc;
}

int MPI_Finalize(void) {
  Profile& p = profile();
  if (p.active) {
    double t = now();
    std::lock_guard<std::mutex> guard(p.lock);
    p.active = false;
    write_profile(p, t);
  }
  return PMPI_Finalize();
}

int MPI_Comm_free(MPI_Comm* comm) {
  Profile& p = profile();
  {
    std::lock_guard<std::mutex> guard(p.lock);
    p.world_ranks.erase(*comm);  // the handle may name another communicator later
    p.hosts_of.erase(*comm);
  }
  return PMPI_Comm_free(comm);
}

#define GMB_P2P_BLOCKING(NAME)                                                           \
  int NAME(const void* buf, int count, MPI_Datatype type, int peer, int tag, MPI_Comm comm) { \
    double t0 = now();                                                                    \
    int rc = P##NAME(buf, count, type, peer, tag, comm);                                  \
    record(#NAME, buf, bytes_of(count, type), comm, peer, tag, false, t0, now());         \
    return rc;                                                                            \
  }
GMB_P2P_BLOCKING(MPI_Send)
GMB_P2P_BLOCKING(MPI_Ssend)
GMB_P2P_BLOCKING(MPI_Rsend)
GMB_P2P_BLOCKING(MPI_Bsend)

#define GMB_P2P_NONBLOCKING(NAME)                                                                         \
  int NAME(const void* buf, int count, MPI_Datatype type, int peer, int tag, MPI_Comm comm, MPI_Request* r) { \
    double t0 = now();                                                                                     \
    int rc = P##NAME(buf, count, type, peer, tag, comm, r);                                                \
    record(#NAME, buf, bytes_of(count, type), comm, peer, tag, false, t0, now(), r);                       \
    return rc;                                                                                             \
  }
GMB_P2P_NONBLOCKING(MPI_Isend)
GMB_P2P_NONBLOCKING(MPI_Issend)
GMB_P2P_NONBLOCKING(MPI_Irsend)
GMB_P2P_NONBLOCKING(MPI_Ibsend)

int MPI_Recv(void* buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm, MPI_Status* status) {
  MPI_Status own;
  double t0 = now();
  int rc = PMPI_Recv(buf, count, type, source, tag, comm, status == MPI_STATUS_IGNORE ? &own : status);
  double t1 = now();
  const MPI_Status& st = status == MPI_STATUS_IGNORE ? own : *status;
  int got = 0;
  PMPI_Get_count(&st, type, &got);
  record("MPI_Recv", buf, bytes_of(got, type), comm, rc == MPI_SUCCESS ? st.MPI_SOURCE : source,
         rc == MPI_SUCCESS ? st.MPI_TAG : tag, false, t0, t1);
  return rc;
}

int MPI_Irecv(void* buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm, MPI_Request* r) {
  double t0 = now();
  int rc = PMPI_Irecv(buf, count, type, source, tag, comm, r);
  record("MPI_Irecv", buf, bytes_of(count, type), comm, source, tag, false, t0, now(), r);
  return rc;
}

int MPI_Sendrecv(const void* sbuf, int scount, MPI_Datatype stype, int dest, int stag, void* rbuf, int rcount,
                 MPI_Datatype rtype, int source, int rtag, MPI_Comm comm, MPI_Status* status) {
  double t0 = now();
  int rc = PMPI_Sendrecv(sbuf, scount, stype, dest, stag, rbuf, rcount, rtype, source, rtag, comm, status);
  double t1 = now();
  // the send's row carries the call's time; the receive's row counts what arrived
  record("MPI_Sendrecv", sbuf, bytes_of(scount, stype), comm, dest, stag, false, t0, t1);
  record("MPI_Sendrecv (receive)", rbuf, bytes_of(rcount, rtype), comm, source, rtag, false, t1, t1);
  return rc;
}

int MPI_Sendrecv_replace(void* buf, int count, MPI_Datatype type, int dest, int stag, int source, int rtag,
                         MPI_Comm comm, MPI_Status* status) {
  double t0 = now();
  int rc = PMPI_Sendrecv_replace(buf, count, type, dest, stag, source, rtag, comm, status);
  record("MPI_Sendrecv_replace", buf, bytes_of(count, type), comm, dest, stag, false, t0, now());
  return rc;
}

int MPI_Request_free(MPI_Request* r) {
  Profile& p = profile();
  {
    std::lock_guard<std::mutex> guard(p.lock);
    auto it = p.pending.find(*r);  // its handle may name another request later
    if (it != p.pending.end()) p.pending.erase(it);
  }
  return PMPI_Request_free(r);
}

int MPI_Wait(MPI_Request* r, MPI_Status* status) {
  auto before = copy(r, 1);
  double t0 = now();
  int rc = PMPI_Wait(r, status);
  completed(before, r, 1, t0, now());
  return rc;
}

int MPI_Waitall(int n, MPI_Request r[], MPI_Status statuses[]) {
  auto before = copy(r, n);
  double t0 = now();
  int rc = PMPI_Waitall(n, r, statuses);
  completed(before, r, n, t0, now());
  return rc;
}

int MPI_Waitany(int n, MPI_Request r[], int* index, MPI_Status* status) {
  auto before = copy(r, n);
  double t0 = now();
  int rc = PMPI_Waitany(n, r, index, status);
  completed(before, r, n, t0, now());
  return rc;
}

int MPI_Waitsome(int n, MPI_Request r[], int* outcount, int indices[], MPI_Status statuses[]) {
  auto before = copy(r, n);
  double t0 = now();
  int rc = PMPI_Waitsome(n, r, outcount, indices, statuses);
  completed(before, r, n, t0, now());
  return rc;
}

int MPI_Test(MPI_Request* r, int* flag, MPI_Status* status) {
  auto before = copy(r, 1);
  double t0 = now();
  int rc = PMPI_Test(r, flag, status);
  completed(before, r, 1, t0, now());
  return rc;
}

int MPI_Testall(int n, MPI_Request r[], int* flag, MPI_Status statuses[]) {
  auto before = copy(r, n);
  double t0 = now();
  int rc = PMPI_Testall(n, r, flag, statuses);
  completed(before, r, n, t0, now());
  return rc;
}

// Collectives: bytes as gmb's collective benchmarks count them, the operation's size S as nccl-tests defines it (the
// reduced or broadcast buffer; for the gathers, scatters and all-to-alls the whole buffer of all blocks).
static int comm_size_of(MPI_Comm comm) {  // static: not one of the interposed names
  int size = 1;
  PMPI_Comm_size(comm, &size);
  return size;
}
int MPI_Barrier(MPI_Comm comm) {
  double t0 = now();
  int rc = PMPI_Barrier(comm);
  record("MPI_Barrier", nullptr, 0, comm, -1, -1, true, t0, now());
  return rc;
}

int MPI_Bcast(void* buf, int count, MPI_Datatype type, int root, MPI_Comm comm) {
  double t0 = now();
  int rc = PMPI_Bcast(buf, count, type, root, comm);
  record("MPI_Bcast", buf, bytes_of(count, type), comm, -1, -1, true, t0, now());
  return rc;
}

int MPI_Reduce(const void* sbuf, void* rbuf, int count, MPI_Datatype type, MPI_Op op, int root, MPI_Comm comm) {
  double t0 = now();
  int rc = PMPI_Reduce(sbuf, rbuf, count, type, op, root, comm);
  record("MPI_Reduce", sbuf == MPI_IN_PLACE ? rbuf : sbuf, bytes_of(count, type), comm, -1, -1, true, t0, now());
  return rc;
}

// the reductions every rank gets a result of: the buffer reduced (the receive buffer where in place)
#define GMB_REDUCING(NAME)                                                                                  \
  int NAME(const void* sbuf, void* rbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm) {          \
    double t0 = now();                                                                                       \
    int rc = P##NAME(sbuf, rbuf, count, type, op, comm);                                                     \
    record(#NAME, sbuf == MPI_IN_PLACE ? rbuf : sbuf, bytes_of(count, type), comm, -1, -1, true, t0, now());    \
    return rc;                                                                                               \
  }
GMB_REDUCING(MPI_Allreduce)
GMB_REDUCING(MPI_Scan)
GMB_REDUCING(MPI_Exscan)

int MPI_Iallreduce(const void* sbuf, void* rbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm,
                   MPI_Request* r) {
  double t0 = now();
  int rc = PMPI_Iallreduce(sbuf, rbuf, count, type, op, comm, r);
  record("MPI_Iallreduce", sbuf == MPI_IN_PLACE ? rbuf : sbuf, bytes_of(count, type), comm, -1, -1, true, t0, now(), r);
  return rc;
}

int MPI_Ibcast(void* buf, int count, MPI_Datatype type, int root, MPI_Comm comm, MPI_Request* r) {
  double t0 = now();
  int rc = PMPI_Ibcast(buf, count, type, root, comm, r);
  record("MPI_Ibcast", buf, bytes_of(count, type), comm, -1, -1, true, t0, now(), r);
  return rc;
}

#define GMB_GATHER_LIKE(NAME)                                                                             \
  int NAME(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf, int rcount, MPI_Datatype rtype,   \
           MPI_Comm comm) {                                                                               \
    double t0 = now();                                                                                     \
    int rc = P##NAME(sbuf, scount, stype, rbuf, rcount, rtype, comm);                                      \
    bool in_place = sbuf == MPI_IN_PLACE;                                                                  \
    std::uint64_t block = in_place ? bytes_of(rcount, rtype) : bytes_of(scount, stype);                    \
    record(#NAME, in_place ? rbuf : sbuf, block * comm_size_of(comm), comm, -1, -1, true, t0, now());          \
    return rc;                                                                                             \
  }
GMB_GATHER_LIKE(MPI_Allgather)
GMB_GATHER_LIKE(MPI_Alltoall)

#define GMB_ROOTED(NAME)                                                                                  \
  int NAME(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf, int rcount, MPI_Datatype rtype,   \
           int root, MPI_Comm comm) {                                                                     \
    double t0 = now();                                                                                     \
    int rc = P##NAME(sbuf, scount, stype, rbuf, rcount, rtype, root, comm);                                \
    bool in_place = sbuf == MPI_IN_PLACE || sbuf == nullptr;                                               \
    std::uint64_t block = in_place ? bytes_of(rcount, rtype) : bytes_of(scount, stype);                    \
    record(#NAME, in_place ? rbuf : sbuf, block * comm_size_of(comm), comm, -1, -1, true, t0, now());          \
    return rc;                                                                                             \
  }
GMB_ROOTED(MPI_Gather)
GMB_ROOTED(MPI_Scatter)

int MPI_Allgatherv(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf, const int rcounts[],
                   const int displs[], MPI_Datatype rtype, MPI_Comm comm) {
  double t0 = now();
  int rc = PMPI_Allgatherv(sbuf, scount, stype, rbuf, rcounts, displs, rtype, comm);
  std::uint64_t bytes = 0;
  for (int i = 0, n = comm_size_of(comm); i < n; ++i) bytes += bytes_of(rcounts[i], rtype);
  record("MPI_Allgatherv", sbuf == MPI_IN_PLACE ? rbuf : sbuf, bytes, comm, -1, -1, true, t0, now());
  return rc;
}

int MPI_Alltoallv(const void* sbuf, const int scounts[], const int sdispls[], MPI_Datatype stype, void* rbuf,
                  const int rcounts[], const int rdispls[], MPI_Datatype rtype, MPI_Comm comm) {
  double t0 = now();
  int rc = PMPI_Alltoallv(sbuf, scounts, sdispls, stype, rbuf, rcounts, rdispls, rtype, comm);
  std::uint64_t bytes = 0;
  bool in_place = sbuf == MPI_IN_PLACE;
  for (int i = 0, n = comm_size_of(comm); i < n; ++i)
    bytes += in_place ? bytes_of(rcounts[i], rtype) : bytes_of(scounts[i], stype);
  record("MPI_Alltoallv", sbuf == MPI_IN_PLACE ? rbuf : sbuf, bytes, comm, -1, -1, true, t0, now());
  return rc;
}

int MPI_Reduce_scatter_block(const void* sbuf, void* rbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
  double t0 = now();
  int rc = PMPI_Reduce_scatter_block(sbuf, rbuf, count, type, op, comm);
  record("MPI_Reduce_scatter_block", sbuf == MPI_IN_PLACE ? rbuf : sbuf, bytes_of(count, type) * comm_size_of(comm),
         comm, -1, -1, true, t0, now());
  return rc;
}

// One-sided: bytes moved per call (the origin's buffer); no peer: the target is a rank of the window's group, which
// the profiler does not translate, so these rows have no path and are not priced.
int MPI_Put(const void* obuf, int ocount, MPI_Datatype otype, int target, MPI_Aint disp, int tcount,
            MPI_Datatype ttype, MPI_Win win) {
  double t0 = now();
  int rc = PMPI_Put(obuf, ocount, otype, target, disp, tcount, ttype, win);
  record("MPI_Put", obuf, bytes_of(ocount, otype), MPI_COMM_NULL, -1, -1, false, t0, now());
  return rc;
}

int MPI_Get(void* obuf, int ocount, MPI_Datatype otype, int target, MPI_Aint disp, int tcount, MPI_Datatype ttype,
            MPI_Win win) {
  double t0 = now();
  int rc = PMPI_Get(obuf, ocount, otype, target, disp, tcount, ttype, win);
  record("MPI_Get", obuf, bytes_of(ocount, otype), MPI_COMM_NULL, -1, -1, false, t0, now());
  return rc;
}

}  // extern "C"
