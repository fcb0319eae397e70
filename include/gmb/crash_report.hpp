// SPDX-License-Identifier: BSD-3-Clause
// What a crash report says: installed after MPI_Init (so that it runs before the MPI library's own
// handler, which it then calls), and told by the runner what is being measured.
#pragma once

#include <string>

namespace gmb {

// `where` is "host H rank R" (where_am_i()).
void install_crash_report(const std::string& where);
// What the process is doing, e.g. "nbc allreduce, 1048576 bytes, memory device/device".
void set_crash_context(const std::string& doing);

}  // namespace gmb
