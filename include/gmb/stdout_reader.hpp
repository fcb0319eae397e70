// SPDX-License-Identifier: BSD-3-Clause
// The table and JSON view on stdout may lose their reader early (`mpirun ... | head -3`): the engine then stops
// printing, keeps writing its --out records and finishes cleanly. Nothing it prints after the reader has gone may
// reach a closed pipe: its own write would raise SIGPIPE, and a launcher that forwards the ranks' output (Debian's
// Open MPI 4.1 mpirun) dies of it, with a segmentation fault in its abort, and takes the ranks with it.
#pragma once

#include <string>

namespace gmb {

// At start-up and again after MPI_Init (an MPI library may unbuffer stdout), before anything is printed: a write to a
// closed pipe returns EPIPE instead of killing the process (SIGPIPE ignored), and stdout is fully buffered, so that
// nothing leaves it before flush_stdout has looked for its reader (a pseudo-terminal, as mpirun gives its ranks, would
// send every line at once).
void guard_stdout();

// Whether the process that will read what this process prints has gone: a pipe on the way out of stdout, followed
// through the processes that forward it (this process's stdout, then each parent's while theirs is a pipe or a
// pseudo-terminal: a launcher's), has no reader left. False where nothing says so (a file, /proc unreadable).
bool stdout_reader_gone();

// Flushes stdout, unless nobody reads it any more (stdout_reader_gone, or EPIPE on this flush): then stdout is pointed
// at /dev/null for the rest of the run, and every later print is dropped. Returns whether stdout is still read.
bool flush_stdout();

// Points stdout at /dev/null for the rest of the run, dropping what it still holds unsent (nothing buffered reaches
// the old output), so that every later print is dropped too.
void silence_stdout();

// For tests: whether the pipe `path` (a /proc/PID/fd/N link to a pipe) has no reader; false when it is no pipe or
// cannot be opened for another reason.
bool pipe_without_reader(const std::string& path);

}  // namespace gmb
