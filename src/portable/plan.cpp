// SPDX-License-Identifier: BSD-3-Clause
#include "gmb/plan.hpp"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>

#include "gmb/error.hpp"

namespace gmb {

namespace {

std::vector<std::string> split_tabs(const std::string& line) {
  std::vector<std::string> fields;
  std::size_t start = 0;
  while (true) {
    const std::size_t tab = line.find('\t', start);
    fields.push_back(line.substr(start, tab == std::string::npos ? std::string::npos : tab - start));
    if (tab == std::string::npos) return fields;
    start = tab + 1;
  }
}

double parse_deadline(const std::string& text, const std::string& at) {
  char* end = nullptr;
  errno = 0;
  const double seconds = std::strtod(text.c_str(), &end);
  if (text.empty() || errno != 0 || *end != '\0' || !std::isfinite(seconds) || seconds < 0)
    throw UsageError(at + ": deadline '" + text + "' is not a number of seconds (accepted: 0 for none, or a positive "
                     "number such as 60 or 2.5)");
  return seconds;
}

}  // namespace

std::vector<PlanBlock> parse_plan(const std::string& text, const std::string& where) {
  std::vector<PlanBlock> blocks;
  std::set<std::string> ids;
  std::istringstream lines(text);
  std::string line;
  for (int number = 1; std::getline(lines, line); ++number) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.find_first_not_of(" \t") == std::string::npos || line[0] == '#') continue;
    const std::string at = where + " line " + std::to_string(number);
    const std::vector<std::string> fields = split_tabs(line);
    if (fields.size() < 3)
      throw UsageError(at + ": a block is ID, deadline in seconds and the benchmark with its arguments, separated by "
                       "tabs (found " + std::to_string(fields.size()) + " field" + (fields.size() == 1 ? "" : "s") +
                       ")");
    PlanBlock block;
    block.id = fields[0];
    block.line = number;
    if (block.id.empty() || block.id.find_first_of(" \"\\") != std::string::npos)
      throw UsageError(at + ": block ID '" + block.id + "' must be non-empty, without spaces, quotes or backslashes");
    if (!ids.insert(block.id).second) throw UsageError(at + ": block ID '" + block.id + "' is used twice");
    block.deadline_s = parse_deadline(fields[1], at);
    block.args.assign(fields.begin() + 2, fields.end());
    if (block.args.front().empty()) throw UsageError(at + ": the block names no benchmark");
    blocks.push_back(std::move(block));
  }
  if (blocks.empty()) throw UsageError(where + ": the plan holds no block (one a line: ID, deadline, benchmark, "
                                       "arguments, separated by tabs)");
  return blocks;
}

std::vector<PlanBlock> read_plan(const std::string& path) {
  std::ifstream file(path);
  if (!file) throw UsageError("cannot read the plan " + path + ": " + std::strerror(errno));
  std::ostringstream text;
  text << file.rdbuf();
  return parse_plan(text.str(), path);
}

}  // namespace gmb
