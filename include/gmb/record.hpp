// SPDX-License-Identifier: BSD-3-Clause
// Records: rank 0 writes one JSON object per line to the --out file (created exclusively: an
// existing file is never overwritten) and flushes each line as it is produced, so an interrupted
// run keeps what it measured. stdout gets a human table or the same JSON lines.
#pragma once

#include <cstdio>
#include <set>
#include <string>
#include <vector>

#include "gmb/json.hpp"

namespace gmb {

// What a rank prints on stdout: the table view, the records as JSON Lines, or nothing (every rank but
// rank 0, which speaks for the job).
enum class StdoutFormat { table, json, none };

struct TableColumn {
  std::string title;
  // Dotted path into a result record, e.g. "time_us.median"; a missing value prints "-".
  std::string path;
  int precision = 2;
};

class RecordSink {
 public:
  // Opens `out_path` with O_EXCL when not empty; throws UsageError if it exists or cannot be created.
  RecordSink(const std::string& out_path, StdoutFormat format);
  ~RecordSink();
  RecordSink(const RecordSink&) = delete;
  RecordSink& operator=(const RecordSink&) = delete;

  void set_columns(std::vector<TableColumn> columns) { columns_ = std::move(columns); }
  // The statistic the benchmark's description ranks it by ("time_us", ...): a result record that carries
  // that statistics object says so in "headline". Empty: none (a benchmark without figures).
  void set_headline(std::string statistic) { headline_ = std::move(statistic); }
  void write_context(const Json& context);
  void write_result(const Json& result);
  // A line of commentary for the table view (ignored in JSON view).
  void note(const std::string& text);
  // Says on stderr why a configuration is not measured, once per launch however many points it refuses.
  void say_unsupported(const std::string& reason);

 private:
  void write_line(const Json& record);
  void print_table_row(const Json& result);
  std::FILE* file_ = nullptr;
  StdoutFormat format_;
  std::string out_path_;  // named when a write fails (a full disk)
  std::vector<TableColumn> columns_;
  std::string headline_;
  bool header_printed_ = false;
  // Reasons the table and stderr have given in full: a later row with the same reason refers to it.
  std::set<std::string> table_reasons_, stderr_reasons_;
};

// Value at a dotted path ("time_us.median"), or nullptr.
const Json* lookup_path(const Json& record, const std::string& dotted);

}  // namespace gmb
