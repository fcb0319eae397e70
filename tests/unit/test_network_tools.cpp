// SPDX-License-Identifier: BSD-3-Clause
// The network ceiling's external tools: reading each tool's output (as the tools print it), refusing figures no
// link carries, their command lines, and the child process that runs them.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "../../src/bench/network_ceiling.hpp"
#include "../../src/bench/network_tools.hpp"
#include "gmb/subprocess.hpp"
#include "gmb/tcp.hpp"

using namespace gmb;

namespace {

const NetworkTool& tool(const std::string& name) {
  for (const auto& t : external_network_tools())
    if (t->name() == name) return *t;
  throw std::runtime_error("no tool " + name);
}

// ucx_perftest 1.13 between two hosts, tag_bw, 1 MiB (a warning line among the results, as UCX prints it).
const char* kUcxOutput = R"(+--------------+--------------+------------------------------+---------------------+-----------------------+
|              |              |       overhead (usec)        |   bandwidth (MB/s)  |  message rate (msg/s) |
+--------------+--------------+----------+---------+---------+----------+----------+-----------+-----------+
|    Stage     | # iterations | 50.0%ile | average | overall |  average |  overall |  average  |  overall  |
+--------------+--------------+----------+---------+---------+----------+----------+-----------+-----------+
[1795709277.195774] [gmbm1:16116:0]     ucp_context.c:1014 UCX  WARN  transport 'cuda_ipc' is not available
[thread 0]              1537      8.977   654.373   654.373     1528.18    1528.18        1528        1528
Final:                  2000      8.325   949.506   722.697     1053.18    1383.71        1053        1384
)";

// ib_write_bw with --report_gbits; perftest may print a CPU frequency warning between heading and result.
const char* kIbOutput = R"(---------------------------------------------------------------------------------------
                    RDMA_Write BW Test
 Dual-port       : OFF		Device         : mlx5_0
---------------------------------------------------------------------------------------
 #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]
Conflicting CPU frequency values detected: 1500.000000 != 3300.016000. CPU Frequency is not max.
 1048576    5000             92.62              92.40              0.011041
---------------------------------------------------------------------------------------
)";

// iperf3 3.12 -J between two emulated hosts, 2 streams, 2 s (trimmed: the intervals and per-stream figures).
const char* kIperfOutput = R"({
 "start": {"version": "iperf 3.12", "test_start": {"protocol": "TCP", "num_streams": 2, "blksize": 131072, "duration": 2}},
 "intervals": [{"sum": {"start": 0, "end": 1.0007, "bytes": 444203008, "bits_per_second": 3551138278.042584, "sender": true}}],
 "end": {
  "sum_sent": {"start": 0, "end": 2.005467, "seconds": 2.005467, "bytes": 1039269888, "bits_per_second": 4145747152.159572, "retransmits": 718},
  "sum_received": {"start": 0, "end": 2.017529, "seconds": 2.017529, "bytes": 1036648448, "bits_per_second": 4110566729.895828},
  "sender_tcp_congestion": "bbr"
 }
})";

const char* kFiOutput = R"(bytes   #sent   #ack     total       time     MB/sec    usec/xfer   Mxfers/sec
1m      200     =200     400m        1.23s    339.87    3085.20       0.00
)";

ToolRun run_of(std::size_t bytes, int iterations = 100) {
  ToolRun run;
  run.bytes = bytes;
  run.iterations = iterations;
  return run;
}

bool has(const std::vector<std::string>& argv, const std::string& word) { return std::find(argv.begin(), argv.end(), word) != argv.end(); }

// The word after `option` in a command line ("" when absent).
std::string after(const std::vector<std::string>& argv, const std::string& option) {
  const auto it = std::find(argv.begin(), argv.end(), option);
  return it == argv.end() || it + 1 == argv.end() ? "" : *(it + 1);
}

}  // namespace

TEST(NetworkTools, NamesInOrder) {
  EXPECT_EQ(network_tool_names(), (std::vector<std::string>{"gmb-tcp", "iperf3", "ucx_perftest", "ib_write_bw", "fi_pingpong"}));
}

TEST(NetworkTools, UcxPerftestReadsTheFinalOverallBandwidthInMebibytes) {
  const ToolReading r = tool("ucx_perftest").read(kUcxOutput, run_of(1 << 20));
  EXPECT_TRUE(r.error.empty()) << r.error;
  EXPECT_NEAR(r.GBps, 1383.71 * 1048576 / 1e9, 1e-9);
  EXPECT_TRUE(implausible_reading(r).empty());
}

TEST(NetworkTools, IbWriteBwReadsTheAverageInGigabits) {
  const ToolReading r = tool("ib_write_bw").read(kIbOutput, run_of(1 << 20));
  EXPECT_TRUE(r.error.empty()) << r.error;
  EXPECT_NEAR(r.GBps, 92.40 / 8, 1e-9);
  // Another size than the one asked for is not taken.
  EXPECT_FALSE(tool("ib_write_bw").read(kIbOutput, run_of(65536)).error.empty());
}

TEST(NetworkTools, IbWriteBwReadsMebibytesWithoutGigabits) {
  const std::string mib = " #bytes     #iterations    BW peak[MiB/sec]    BW average[MiB/sec]   MsgRate[Mpps]\n 65536      5000   11000.00   10000.00   0.16\n";
  EXPECT_NEAR(tool("ib_write_bw").read(mib, run_of(65536)).GBps, 10000.0 * 1048576 / 1e9, 1e-9);
}

TEST(NetworkTools, FiPingpongReadsMegabytesPerSecond) {
  const ToolReading r = tool("fi_pingpong").read(kFiOutput, run_of(1 << 20));
  EXPECT_TRUE(r.error.empty()) << r.error;
  EXPECT_NEAR(r.GBps, 0.33987, 1e-9);
}

TEST(NetworkTools, Iperf3ReadsWhatTheReceiverGotFromItsJsonReport) {
  const ToolReading r = tool("iperf3").read(kIperfOutput, run_of(1 << 20));
  EXPECT_TRUE(r.error.empty()) << r.error;
  EXPECT_NEAR(r.GBps, 4110566729.895828 / 8e9, 1e-9);  // end.sum_received, not the sender's sum_sent
  EXPECT_EQ(r.bytes_moved, 1036648448);
  EXPECT_NE(r.printed.find("end.sum_received"), std::string::npos) << r.printed;
}

TEST(NetworkTools, Iperf3SaysWhatWentWrong) {
  const ToolReading refused = tool("iperf3").read(R"({"start": {}, "intervals": [], "end": {}, "error": "unable to connect to server: Connection refused"})",
                                                  run_of(1 << 20));
  EXPECT_EQ(refused.error, "iperf3 said: unable to connect to server: Connection refused");
  const ToolReading text = tool("iperf3").read("iperf3: error - unable to connect\n", run_of(1 << 20));
  EXPECT_NE(text.error.find("not the JSON report"), std::string::npos) << text.error;
  EXPECT_NE(text.error.find("unable to connect"), std::string::npos) << text.error;
  EXPECT_NE(tool("iperf3").read(R"({"end": {"sum_sent": {"bits_per_second": 1e9}}})", run_of(1 << 20)).error.find("sum_received"), std::string::npos);
}

TEST(NetworkTools, OutputWithoutAResultSaysWhatWasMissingAndShowsTheOutput) {
  for (const std::string name : {"ucx_perftest", "ib_write_bw", "fi_pingpong"}) {
    const ToolReading r = tool(name).read("connect() failed: Connection refused\n", run_of(1024));
    EXPECT_EQ(r.GBps, 0) << name;
    EXPECT_NE(r.error.find("Connection refused"), std::string::npos) << name << ": " << r.error;
  }
}

// A figure no link carries is refused, quoting what the tool printed: never a ceiling of 1e297 GB/s, never a
// record whose bandwidth is null.
TEST(NetworkTools, AnImplausibleFigureIsRefusedWithTheTextPrinted) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"1e300", "above 10000 GB/s"}, {"inf", "not a finite number"},  {"1e9999", "not a finite number"},
      {"nan", "not a finite number"}, {"-5.0", "not above 0"},        {"0", "not above 0"}};
  for (const auto& [figure, why] : cases) {
    const std::string line = "Final: 100 1.0 1.0 1.0 1.0 " + figure + " 100";
    const ToolReading r = tool("ucx_perftest").read(line + "\n", run_of(1 << 20));
    ASSERT_TRUE(r.error.empty()) << figure << ": " << r.error;
    const std::string refusal = implausible_reading(r);
    EXPECT_EQ(refusal.rfind("printed an implausible figure (", 0), 0u) << refusal;
    EXPECT_NE(refusal.find(why), std::string::npos) << refusal;
    EXPECT_NE(refusal.find(line), std::string::npos) << refusal;
  }
  ToolReading iperf = tool("iperf3").read(R"({"end": {"sum_received": {"bytes": 1, "bits_per_second": 1e9999}}})", run_of(1 << 20));
  ASSERT_TRUE(iperf.error.empty()) << iperf.error;
  EXPECT_NE(implausible_reading(iperf).find("not a finite number"), std::string::npos);
  iperf = tool("iperf3").read(R"({"end": {"sum_received": {"bytes": 1, "bits_per_second": -8e9}}})", run_of(1 << 20));
  EXPECT_NE(implausible_reading(iperf).find("not above 0"), std::string::npos);
}

TEST(NetworkTools, ClientCommandsNameSizePortAndServer) {
  const ToolCommand u = tool("ucx_perftest").client(run_of(4096), 12345, "10.0.0.2");
  EXPECT_EQ(u.argv[0], "ucx_perftest");
  EXPECT_EQ(u.argv[1], "10.0.0.2");
  EXPECT_TRUE(has(u.argv, "tag_bw") && has(u.argv, "12345") && has(u.argv, "4096"));
  EXPECT_FALSE(has(u.argv, "-m"));  // host buffers unless asked for GPU ones
  const ToolCommand ib = tool("ib_write_bw").client(run_of(4096), 12345, "10.0.0.2");
  EXPECT_EQ(ib.argv.back(), "10.0.0.2");
  EXPECT_TRUE(has(ib.argv, "--report_gbits"));
}

TEST(NetworkTools, Iperf3RunsStreamsForWholeSecondsAsGmbTcpWritesAndReportsJson) {
  ToolRun run = run_of(16u << 20);
  run.streams = 4;
  run.seconds = 0.25;  // iperf3 3.x takes -t as a whole number, and 0 runs forever
  const ToolCommand c = tool("iperf3").client(run, 5201, "10.0.0.2");
  EXPECT_EQ(after(c.argv, "-c"), "10.0.0.2");
  EXPECT_EQ(after(c.argv, "-P"), "4");
  EXPECT_EQ(after(c.argv, "-t"), "1");
  // gmb-tcp's write length and TCP_NODELAY, so that both tools measure the same stream (iperf3 refuses -l over 1 MiB)
  EXPECT_EQ(after(c.argv, "-l"), std::to_string(kStreamWriteBytes));
  EXPECT_LE(kStreamWriteBytes, 1u << 20);
  EXPECT_TRUE(has(c.argv, "-N"));
  EXPECT_TRUE(has(c.argv, "-J"));
  run.bytes = 4096;
  run.seconds = 2.5;
  const ToolCommand small = tool("iperf3").client(run, 5201, "10.0.0.2");
  EXPECT_EQ(after(small.argv, "-l"), "4096");
  EXPECT_EQ(after(small.argv, "-t"), "3");
  EXPECT_EQ(tool("iperf3").server(run, 5201).argv, (std::vector<std::string>{"iperf3", "-s", "-1", "-p", "5201"}));
  EXPECT_TRUE(tool("iperf3").parallel_streams());
  EXPECT_FALSE(tool("ucx_perftest").parallel_streams());
}

TEST(NetworkTools, UcxPerftestOnGpuBuffersAsksForCudaMemoryOnTheRanksGpu) {
  ToolRun run = run_of(1 << 20);
  run.device_memory = true;
  run.cuda_device = "GPU-0123";
  const ToolCommand c = tool("ucx_perftest").client(run, 12345, "10.0.0.2");
  EXPECT_EQ(after(c.argv, "-m"), "cuda");
  EXPECT_EQ(c.environment.at("CUDA_VISIBLE_DEVICES"), "GPU-0123");
  EXPECT_NE(c.device.find("GPU buffers"), std::string::npos) << c.device;
  EXPECT_TRUE(tool("ucx_perftest").measures_gpu_buffers());
  EXPECT_FALSE(tool("iperf3").measures_gpu_buffers());
}

TEST(NetworkTools, UcxPerftestMemoryTypesAreThoseItsHelpLists) {
  const std::string host_only = "     -m <send mem type>[,<recv mem type>]\n                    memory type of message for sender and receiver (host)\n"
                                "                        host - System memory\n     -n <iters>     number of iterations to run (1000000)\n";
  EXPECT_EQ(ucx_perftest_memory_types_in(host_only), (std::vector<std::string>{"host"}));
  const std::string cuda = "     -m <send mem type>[,<recv mem type>]\n                    memory type of message for sender and receiver (host)\n"
                           "                        host - System memory\n                        cuda - NVIDIA GPU memory\n"
                           "                        cuda-managed - NVIDIA GPU managed/unified memory\n     -n <iters>     number of iterations\n";
  EXPECT_EQ(ucx_perftest_memory_types_in(cuda), (std::vector<std::string>{"host", "cuda", "cuda-managed"}));
}

TEST(NetworkTools, AUcxPerftestThatDoesNotRunIsNotTakenForAUcxWithoutCuda) {
  const std::string cuda = "     -m <send mem type>[,<recv mem type>]\n                        host - System memory\n"
                           "                        cuda - NVIDIA GPU memory\n     -n <iters>     number of iterations\n";
  EXPECT_EQ(ucx_perftest_gpu_buffers_problem_in(cuda, ""), "");
  const std::string host_only = "     -m <send mem type>[,<recv mem type>]\n                        host - System memory\n";
  EXPECT_NE(ucx_perftest_gpu_buffers_problem_in(host_only, "").find("built without CUDA"), std::string::npos);
  const std::string loader = "ucx_perftest: error while loading shared libraries: libgomp.so.1: cannot open shared object file\n";
  const std::string why = ucx_perftest_gpu_buffers_problem_in(loader, "exit status 127");
  EXPECT_EQ(why, "`ucx_perftest -h` did not run (exit status 127): " + loader.substr(0, loader.size() - 1));
  EXPECT_EQ(ucx_perftest_gpu_buffers_problem_in("", "it did not end within 20 s"),
            "`ucx_perftest -h` did not run (it did not end within 20 s), printing nothing");
}

TEST(NetworkTools, IterationsKeepARunShortAndLongEnough) {
  const NetworkTool& u = tool("ucx_perftest");
  EXPECT_EQ(u.iterations(64u << 20), 5);
  EXPECT_EQ(u.iterations(1u << 20), 256);
  EXPECT_EQ(u.iterations(8), 20000);
  EXPECT_LE(tool("fi_pingpong").iterations(8), 2000);
}

TEST(Subprocess, FindsProgramsOnPath) {
  EXPECT_FALSE(find_program("sh").empty());
  EXPECT_TRUE(find_program("gmb-no-such-program").empty());
}

TEST(Subprocess, CapturesOutputAndExitStatusAndEnvironment) {
  ChildProcess child({"sh", "-c", "echo out $GMB_TOOL_TEST; echo err >&2; exit 3"}, {{"GMB_TOOL_TEST", "set"}}, "test");
  ASSERT_TRUE(child.wait(30));
  EXPECT_FALSE(child.succeeded());
  EXPECT_EQ(child.exit_description(), "exit status 3");
  EXPECT_NE(child.output().find("out set"), std::string::npos);
  EXPECT_NE(child.output().find("err"), std::string::npos);
}

TEST(Subprocess, AChildPastItsDeadlineIsStopped) {
  ChildProcess child({"sleep", "30"}, {}, "test");
  EXPECT_FALSE(child.wait(0.05));
  child.stop();
  EXPECT_FALSE(child.running());
  EXPECT_EQ(child.exit_description(), "killed by signal 15");
}

TEST(Subprocess, SeesAListeningPort) {
  TcpListener listener("127.0.0.1", "test");
  EXPECT_TRUE(tcp_port_listening(listener.port()));
}
