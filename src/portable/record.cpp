// SPDX-License-Identifier: BSD-3-Clause
#include "gmb/record.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "gmb/error.hpp"
#include "gmb/sizes.hpp"
#include "gmb/stdout_reader.hpp"

namespace gmb {

RecordSink::RecordSink(const std::string& out_path, StdoutFormat format) : format_(format), out_path_(out_path) {
  if (out_path.empty()) return;
  // O_EXCL: an existing result file is never overwritten, even if it appears between check and open.
  const int fd = ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0644);
  if (fd < 0) {
    if (errno == EEXIST)
      throw UsageError("output file '" + out_path + "' already exists; gmb never overwrites results (choose a new name)");
    throw UsageError("cannot create output file '" + out_path + "': " + std::strerror(errno));
  }
  file_ = ::fdopen(fd, "w");
  if (!file_) {
    ::close(fd);
    throw UsageError("cannot open output file '" + out_path + "': " + std::strerror(errno));
  }
}

RecordSink::~RecordSink() {
  if (file_) std::fclose(file_);
}

void RecordSink::write_line(const Json& record) {
  const std::string line = record.dump() + "\n";
  if (file_) {
    if (std::fputs(line.c_str(), file_) < 0 || std::fflush(file_) != 0)
      GMB_FATAL("writing the output file '" + out_path_ + "' failed: " + std::strerror(errno) +
                " (the records before this one are complete in it)");
  }
  if (format_ == StdoutFormat::json) {
    std::fputs(line.c_str(), stdout);
    flush_stdout();
  }
}

void RecordSink::write_context(const Json& context) {
  write_line(context);
  if (format_ != StdoutFormat::table) return;
  const Json* bench = context.find("benchmark");
  const Json* mpi = context.find("mpi");
  std::printf("# gmb-bench %s", bench && bench->as_string() ? bench->as_string()->c_str() : "?");
  if (const Json* ranks = context.find("world_size")) std::printf(" on %.0f ranks", ranks->as_number());
  std::printf("\n");
  if (mpi) {
    if (const Json* v = mpi->find("library_version"); v && v->as_string()) {
      std::string first_line = *v->as_string();
      first_line = first_line.substr(0, first_line.find('\n'));
      std::printf("# MPI: %s\n", first_line.c_str());
    }
    if (const Json* aw = mpi->find("gpu_awareness"))
      if (const Json* verdict = aw->find("verdict"); verdict && verdict->as_string())
        std::printf("# GPU-aware: %s\n", verdict->as_string()->c_str());
  }
  flush_stdout();
}

void RecordSink::say_unsupported(const std::string& reason) {
  if (stderr_reasons_.insert(reason).second) std::fprintf(stderr, "gmb-bench: unsupported: %s\n", reason.c_str());
}

void RecordSink::note(const std::string& text) {
  if (format_ == StdoutFormat::table) {
    std::printf("# %s\n", text.c_str());
    flush_stdout();
  }
}

const Json* lookup_path(const Json& record, const std::string& dotted) {
  const Json* node = &record;
  std::size_t start = 0;
  while (node) {
    const auto dot = dotted.find('.', start);
    node = node->find(dotted.substr(start, dot == std::string::npos ? std::string::npos : dot - start));
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  return node;
}

void RecordSink::print_table_row(const Json& result) {
  if (!header_printed_) {
    std::printf("%-12s", "size");
    for (const auto& c : columns_) std::printf(" %14s", c.title.c_str());
    std::printf("  %s\n", "status");
    header_printed_ = true;
  }
  const Json* bytes = result.find("bytes");
  std::printf("%-12s", format_size(bytes ? static_cast<std::uint64_t>(bytes->as_number()) : 0).c_str());
  for (const auto& c : columns_) {
    const Json* v = lookup_path(result, c.path);
    if (v && v->is_number()) std::printf(" %14.*f", c.precision, v->as_number());
    else if (v && v->as_string()) std::printf(" %14s", v->as_string()->c_str());
    else std::printf(" %14s", "-");
  }
  const Json* status = result.find("status");
  std::string text = status && status->as_string() ? *status->as_string() : "?";
  if (const Json* reason = result.find("reason"); reason && reason->as_string())
    text += table_reasons_.insert(*reason->as_string()).second ? ": " + *reason->as_string() : " (as above)";
  if (const Json* validation = result.find("validation"); validation && validation->as_string() && *validation->as_string() != "off")
    text += " (validation " + *validation->as_string() + ")";
  std::printf("  %s\n", text.c_str());
  flush_stdout();
}

void RecordSink::write_result(const Json& result) {
  const Json* headline = headline_.empty() ? nullptr : result.find(headline_);
  if (headline && headline->is_object()) {
    Json named = result;
    named.set("headline", headline_);
    write_line(named);
  } else {
    write_line(result);
  }
  // A record without figures (doctor's) has no row to show: its notes say what it found.
  if (format_ == StdoutFormat::table && !columns_.empty()) print_table_row(result);
}

}  // namespace gmb
