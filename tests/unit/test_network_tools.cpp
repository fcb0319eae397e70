// SPDX-License-Identifier: BSD-3-Clause
// The network ceiling's external tools: reading each tool's output (as the tools print it), their command
// lines, and the child process that runs them.
#include <gtest/gtest.h>

#include <algorithm>

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

const char* kFiOutput = R"(bytes   #sent   #ack     total       time     MB/sec    usec/xfer   Mxfers/sec
1m      200     =200     400m        1.23s    339.87    3085.20       0.00
)";

}  // namespace

TEST(NetworkTools, NamesInOrder) {
  EXPECT_EQ(network_tool_names(), (std::vector<std::string>{"gmb-tcp", "ucx_perftest", "ib_write_bw", "fi_pingpong"}));
}

TEST(NetworkTools, UcxPerftestReadsTheFinalOverallBandwidthInMebibytes) {
  const ToolReading r = tool("ucx_perftest").read(kUcxOutput, 1 << 20);
  EXPECT_TRUE(r.error.empty()) << r.error;
  EXPECT_NEAR(r.GBps, 1383.71 * 1048576 / 1e9, 1e-9);
}

TEST(NetworkTools, IbWriteBwReadsTheAverageInGigabits) {
  const ToolReading r = tool("ib_write_bw").read(kIbOutput, 1 << 20);
  EXPECT_TRUE(r.error.empty()) << r.error;
  EXPECT_NEAR(r.GBps, 92.40 / 8, 1e-9);
  // Another size than the one asked for is not taken.
  EXPECT_FALSE(tool("ib_write_bw").read(kIbOutput, 65536).error.empty());
}

TEST(NetworkTools, IbWriteBwReadsMebibytesWithoutGigabits) {
  const std::string mib = " #bytes     #iterations    BW peak[MiB/sec]    BW average[MiB/sec]   MsgRate[Mpps]\n 65536      5000   11000.00   10000.00   0.16\n";
  EXPECT_NEAR(tool("ib_write_bw").read(mib, 65536).GBps, 10000.0 * 1048576 / 1e9, 1e-9);
}

TEST(NetworkTools, FiPingpongReadsMegabytesPerSecond) {
  const ToolReading r = tool("fi_pingpong").read(kFiOutput, 1 << 20);
  EXPECT_TRUE(r.error.empty()) << r.error;
  EXPECT_NEAR(r.GBps, 0.33987, 1e-9);
}

TEST(NetworkTools, OutputWithoutAResultSaysWhatWasMissingAndShowsTheOutput) {
  for (const std::string name : {"ucx_perftest", "ib_write_bw", "fi_pingpong"}) {
    const ToolReading r = tool(name).read("connect() failed: Connection refused\n", 1024);
    EXPECT_EQ(r.GBps, 0) << name;
    EXPECT_NE(r.error.find("Connection refused"), std::string::npos) << name << ": " << r.error;
  }
}

TEST(NetworkTools, ClientCommandsNameSizePortAndServer) {
  const ToolCommand u = tool("ucx_perftest").client(4096, 100, 12345, "10.0.0.2");
  EXPECT_EQ(u.argv[0], "ucx_perftest");
  EXPECT_EQ(u.argv[1], "10.0.0.2");
  EXPECT_NE(std::find(u.argv.begin(), u.argv.end(), "tag_bw"), u.argv.end());
  EXPECT_NE(std::find(u.argv.begin(), u.argv.end(), "12345"), u.argv.end());
  EXPECT_NE(std::find(u.argv.begin(), u.argv.end(), "4096"), u.argv.end());
  const ToolCommand ib = tool("ib_write_bw").client(4096, 100, 12345, "10.0.0.2");
  EXPECT_EQ(ib.argv.back(), "10.0.0.2");
  EXPECT_NE(std::find(ib.argv.begin(), ib.argv.end(), "--report_gbits"), ib.argv.end());
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
