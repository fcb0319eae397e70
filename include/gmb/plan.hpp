// SPDX-License-Identifier: BSD-3-Clause
// A plan: the benchmark invocations (blocks) one launch runs one after the other inside one MPI_Init
// (`gmb-bench plan FILE`), each with the arguments a launch of its own would be given and its own records file.
// The file is text, one block a line, fields separated by tabs:
//   ID <tab> DEADLINE_S <tab> BENCHMARK <tab> ARG <tab> ARG ...
// ID names the block in the status file; DEADLINE_S (0: none) is the wall time after which the block measures no
// further size; blank lines and lines starting with '#' are ignored.
#pragma once

#include <string>
#include <vector>

namespace gmb {

struct PlanBlock {
  std::string id;
  double deadline_s = 0;
  std::vector<std::string> args;  // the benchmark's name, then its options
  int line = 0;                   // where the block is in the file, for messages
};

// The blocks of the plan in `text` (read from `where`, named in messages); throws UsageError naming the line and what
// is accepted when a line is malformed, an ID repeats or the plan holds no block.
std::vector<PlanBlock> parse_plan(const std::string& text, const std::string& where);

// The plan file at `path`, read and parsed (UsageError when it cannot be read).
std::vector<PlanBlock> read_plan(const std::string& path);

}  // namespace gmb
