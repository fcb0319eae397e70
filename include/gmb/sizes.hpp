// Message-size syntax: "8", "4K", "1M", "2G" (powers of 1024, optional trailing B/iB),
// ranges "MIN:MAX" in doubling steps (OMB's -m), lists "1,8,4K".
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace gmb {

// Throws UsageError with what was wrong and what is accepted.
std::uint64_t parse_size(const std::string& text);
std::vector<std::uint64_t> parse_sizes(const std::string& text);
// "4 KiB"-style label used in tables.
std::string format_size(std::uint64_t bytes);

}  // namespace gmb
