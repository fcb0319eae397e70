// SPDX-License-Identifier: BSD-3-Clause
#include "gmb/args.hpp"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cctype>
#include <cmath>
#include <cstdlib>

#include "gmb/error.hpp"
#include "gmb/sizes.hpp"

namespace gmb {

void ArgParser::value(std::vector<std::string> names, std::string metavar, std::string help, Setter set) {
  specs_.push_back({std::move(names), std::move(metavar), std::move(help), std::move(set), nullptr, {}, false});
}

void ArgParser::flag(std::vector<std::string> names, std::string help, bool* target) {
  specs_.push_back({std::move(names), "", std::move(help), [target](const std::string&) { *target = true; }, nullptr, {}, false});
}

void ArgParser::optional_value(std::vector<std::string> names, std::string metavar, std::string help,
                               std::function<bool(const std::string& next)> takes, Setter set) {
  specs_.push_back({std::move(names), std::move(metavar), std::move(help), std::move(set), std::move(takes), {}, false});
}

void ArgParser::choice(std::vector<std::string> names, std::vector<std::string> choices, std::string what,
                       std::string help, Setter set) {
  std::string metavar;
  for (const auto& c : choices) metavar += (metavar.empty() ? "" : "|") + c;
  Setter checked = [choices, what, set = std::move(set)](const std::string& v) { set(parse_choice(v, choices, what)); };
  specs_.push_back({std::move(names), std::move(metavar), std::move(help), std::move(checked), nullptr, std::move(choices), false});
}

void ArgParser::choice_list(std::vector<std::string> names, std::vector<std::string> choices, std::string what, std::string help,
                            std::function<void(const std::vector<std::string>&)> set) {
  std::string metavar;
  for (const auto& c : choices) metavar += (metavar.empty() ? "" : "|") + c;
  Setter checked = [choices, what, set = std::move(set)](const std::string& v) { set(parse_choice_list(v, choices, what)); };
  specs_.push_back({std::move(names), metavar + "[,...]", std::move(help), std::move(checked), nullptr, std::move(choices), true});
}

void ArgParser::refuse(std::vector<std::string> names, std::string reason) {
  refusals_.push_back({std::move(names), std::move(reason)});
}

const ArgParser::Spec* ArgParser::lookup(const std::string& name) const {
  for (const auto& spec : specs_)
    for (const auto& n : spec.names)
      if (n == name) return &spec;
  return nullptr;
}

bool ArgParser::declares(const std::string& name) const { return lookup(name) != nullptr; }

bool ArgParser::given(const std::string& name) const {
  const Spec* spec = lookup(name);
  return spec && std::find(given_.begin(), given_.end(), spec) != given_.end();
}

void ArgParser::set_value(const Spec& spec, const std::string& name, const std::string& value) const {
  try {
    spec.set(value);
  } catch (const UsageError& e) {
    throw UsageError(name + ": " + e.what());
  }
}

void ArgParser::apply(const std::string& name, const std::string& value) const {
  const Spec* spec = lookup(name);
  if (!spec) throw UsageError("unknown option '" + name + "'");
  set_value(*spec, name, value);
}

std::vector<std::string> ArgParser::parse(const std::vector<std::string>& args) const {
  std::vector<std::string> positionals;
  given_.clear();
  for (std::size_t k = 0; k < args.size(); ++k) {
    const std::string& arg = args[k];
    // A lone "-" or a negative-looking number is positional; options start with a letter.
    if (arg.size() < 2 || arg[0] != '-' || (arg[1] != '-' && !std::isalpha(static_cast<unsigned char>(arg[1])))) {
      positionals.push_back(arg);
      continue;
    }
    std::string name = arg, inline_value;
    bool has_inline = false;
    if (const auto eq = arg.find('='); eq != std::string::npos && arg.rfind("--", 0) == 0) {
      name = arg.substr(0, eq);
      inline_value = arg.substr(eq + 1);
      has_inline = true;
    }
    const Spec* spec = lookup(name);
    if (!spec) {
      for (const auto& refusal : refusals_)
        if (std::find(refusal.names.begin(), refusal.names.end(), name) != refusal.names.end())
          throw UsageError(name + ": " + refusal.reason);
      std::vector<std::string> declared;
      for (const auto& known : specs_) declared.insert(declared.end(), known.names.begin(), known.names.end());
      throw UsageError("unknown option '" + name + "'" + did_you_mean(name, declared) +
                       " (see --help for the options this benchmark accepts)");
    }
    given_.push_back(spec);
    if (spec->metavar.empty()) {
      if (has_inline) throw UsageError("option " + name + " takes no value");
      spec->set("");
      continue;
    }
    std::string value;
    if (has_inline) {
      value = inline_value;
    } else if (spec->takes) {
      if (k + 1 < args.size() && spec->takes(args[k + 1])) value = args[++k];
    } else {
      if (k + 1 >= args.size()) throw UsageError("option " + name + " needs a value (" + spec->metavar + ")");
      value = args[++k];
    }
    set_value(*spec, name, value);
  }
  return positionals;
}

std::string ArgParser::help() const {
  std::string out;
  for (const auto& spec : specs_) {
    std::string left = "  ";
    for (std::size_t k = 0; k < spec.names.size(); ++k) left += (k ? ", " : "") + spec.names[k];
    if (!spec.metavar.empty()) left += spec.takes ? " [" + spec.metavar + "]" : " " + spec.metavar;
    if (left.size() < 30) left.resize(30, ' ');
    else left += "\n" + std::string(30, ' ');
    out += left + spec.help + "\n";
  }
  return out;
}

std::vector<ArgParser::OptionInfo> ArgParser::options() const {
  std::vector<OptionInfo> out;
  for (const auto& spec : specs_)
    out.push_back({spec.names, spec.metavar.empty() ? "none" : spec.takes ? "optional" : "required", spec.metavar,
                   spec.choices, spec.list});
  return out;
}

// A whole number from `lowest` to INT_MAX; the message names the accepted range, whatever was wrong.
static int parse_int_from(const std::string& text, const std::string& what, int lowest) {
  errno = 0;
  char* end = nullptr;
  const long v = std::strtol(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || errno == ERANGE || v > INT_MAX || v < lowest)
    throw UsageError("bad " + what + " '" + text + "' (accepted: a whole number from " + std::to_string(lowest) +
                     " to " + std::to_string(INT_MAX) + ")");
  return static_cast<int>(v);
}

int parse_positive_int(const std::string& text, const std::string& what) { return parse_int_from(text, what, 1); }

int parse_nonnegative_int(const std::string& text, const std::string& what) { return parse_int_from(text, what, 0); }

// A finite decimal number, the whole of `text` (no spaces, no "inf"); false otherwise.
static bool parse_finite(const std::string& text, double& value) {
  if (text.empty() || std::isspace(static_cast<unsigned char>(text[0]))) return false;
  errno = 0;
  char* end = nullptr;
  value = std::strtod(text.c_str(), &end);
  return *end == '\0' && errno != ERANGE && std::isfinite(value);
}

double parse_precision(const std::string& text) {
  const bool percent = !text.empty() && text.back() == '%';
  double value = 0;
  const bool number = parse_finite(percent ? text.substr(0, text.size() - 1) : text, value);
  if (percent) value /= 100;
  // Above 0.5 the interval would be allowed to reach from half the median to one and a half times it:
  // no precision at all, and more likely a percentage written without its "%".
  if (!number || !(value > 0) || value > 0.5)
    throw UsageError("bad precision '" + text + "' (accepted: a fraction above 0 and at most 0.5, e.g. 0.03 for "
                     "+-3%, or a percentage, e.g. 3%)");
  return value;
}

double parse_positive_seconds(const std::string& text, const std::string& what) {
  double value = 0;
  if (!parse_finite(text, value) || !(value > 0))
    throw UsageError("bad " + what + " '" + text + "' (accepted: seconds above 0, e.g. 1 or 0.25)");
  return value;
}

// Letters to insert, delete or replace to turn `a` into `b` (Levenshtein distance).
static std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

std::string did_you_mean(const std::string& name, const std::vector<std::string>& known) {
  // Close means at most a third of the letters wrong (at least one): "--size" finds "--sizes", "pingpong" finds
  // nothing.
  std::size_t best = std::max<std::size_t>(1, name.size() / 3) + 1;
  std::string closest;
  for (const auto& k : known)
    if (const std::size_t d = edit_distance(name, k); d < best) best = d, closest = k;
  return closest.empty() ? "" : "; did you mean '" + closest + "'?";
}

std::string parse_choice(const std::string& text, const std::vector<std::string>& choices, const std::string& what) {
  for (const auto& c : choices)
    if (c == text) return text;
  std::string accepted;
  for (const auto& c : choices) accepted += (accepted.empty() ? "" : ", ") + c;
  throw UsageError("unknown " + what + " '" + text + "'" + did_you_mean(text, choices) + " (accepted: " + accepted +
                   ")");
}

std::vector<std::string> parse_choice_list(const std::string& text, const std::vector<std::string>& choices,
                                           const std::string& what) {
  std::string accepted;
  for (const auto& c : choices) accepted += (accepted.empty() ? "" : ", ") + c;
  accepted += ", or a comma-separated list of them";
  std::vector<std::string> items;
  std::size_t start = 0;
  for (;;) {
    const std::size_t comma = text.find(',', start);
    const std::string item = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (item.empty()) throw UsageError("an empty " + what + " in '" + text + "' (accepted: " + accepted + ")");
    if (std::find(choices.begin(), choices.end(), item) == choices.end())
      throw UsageError("unknown " + what + " '" + item + "'" + did_you_mean(item, choices) + " (accepted: " + accepted + ")");
    if (std::find(items.begin(), items.end(), item) == items.end()) items.push_back(item);
    if (comma == std::string::npos) return items;
    start = comma + 1;
  }
}

std::string parse_omb_accelerator(const std::string& text) {
  std::string lower = text;
  for (auto& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (lower == "cuda" || lower == "managed") return lower;
  if (lower == "openacc" || lower == "rocm" || lower == "sycl")
    throw UsageError("accelerator '" + text + "' is not supported: gmb-bench measures CUDA devices only (accepted: cuda, "
                     "managed)");
  throw UsageError("unknown accelerator '" + text + "' (accepted: cuda, managed)");
}

std::string omb_pt2pt_accelerator_warning(const std::string& accelerator, const std::string& program,
                                          const std::vector<std::string>& letters, bool sides_given) {
  if (letters.empty() && !sides_given)
    return "-d " + accelerator + " without buffer letters: both buffers in host memory, as in " + program +
           " (OMB's default H H); give D D for device buffers";
  if (accelerator == "managed" && std::find(letters.begin(), letters.end(), "D") != letters.end())
    return "-d managed with D: D is device memory, as OMB allocates it (cudaMalloc); managed memory is MH or MD "
           "(managed, placed on the host or on the device)";
  return "";
}

void refuse_nccl_tests_sizes(const std::vector<std::string>& args) {
  auto value_of = [&](const char* name) -> const std::string* {
    const auto at = std::find(args.begin(), args.end(), name);
    return at == args.end() || at + 1 == args.end() ? nullptr : &*(at + 1);
  };
  const std::string *min = value_of("-b"), *max = value_of("-e"), *factor = value_of("-f");
  if (!min || std::find(args.begin(), args.end(), "-e") == args.end()) return;
  try {
    parse_size(*min);
  } catch (const UsageError&) {
    return;  // -b with something else: OMB's --buffer-num, refused as such
  }
  std::string message = "-b " + *min + " -e " + (max ? *max : "MAX") + ": this is nccl-tests' spelling: use --sizes " + *min +
                        ":" + (max ? *max : "MAX");
  if (factor && *factor != "2")
    message += " (gmb's ranges double at each step, as -f 2; other steps as a list: --sizes 8,64,512)";
  throw UsageError(message);
}

void add_omb_refusals(ArgParser& parser) {
  // OMB 7.x's letters (c/util/osu_util.c process_options, osu_util_options.h) with no counterpart in the
  // benchmark at hand. Options gmb has under OMB's letter (-m -i -x -c -f -d -M -W -t -r -l -k -T) are declared
  // by the driver or by the benchmark; where a benchmark lacks one, its refusal says where it applies.
  const std::vector<std::pair<std::string, std::string>> refusals = {
      {"-v", "OMB's --version; gmb-bench prints its version with 'gmb-bench list'"},
      {"-W", "OMB's --window-size applies to the windowed bandwidth benchmarks: bw, bibw, mbw"},
      {"-t", "OMB's -t is the MPI_Test calls of the non-blocking collectives (gmb: nbc -t/--tests) or the threads "
             "or processes of osu_latency_mt/osu_latency_mp, which gmb does not have"},
      {"-r", "OMB's --cuda-target (cpu|gpu|both) is the dummy compute of the non-blocking collectives: nbc -r/--compute"},
      {"-a", "OMB's --array-size sizes the arrays of its GPU dummy compute; gmb calibrates its GPU compute by time "
             "(nbc --compute gpu) and has no array size"},
      {"-s", "OMB's --sync-option belongs to the one-sided (RMA) benchmarks, which gmb does not have"},
      {"-w", "OMB's --win-options belongs to the one-sided (RMA) benchmarks, which gmb does not have"},
      {"-R", "OMB's --print-rate of osu_mbw_mr: gmb's mbw always records the message rate (message_rate_Mps)"},
      {"-p", "OMB's --num-pairs of osu_mbw_mr: gmb's mbw and mlat pair all ranks (ranks/2 pairs); launch 2 x PAIRS "
             "ranks"},
      {"-V", "OMB's --vary-window of osu_mbw_mr: gmb measures one window per run (bw, bibw, mbw -W W)"},
      {"-b", "OMB's --buffer-num (single|multiple buffers per window): gmb uses one send and one receive buffer"},
      {"-u", "OMB's --validation-warmup: gmb's -c checks one extra iteration before the warm-up and one after the "
             "timed ones, a fixed count"},
      {"-G", "OMB's --graph (tty, png, pdf): gmb draws its figures in 'gmb report'"},
      {"-P", "OMB's --papi: gmb does not read PAPI counters"},
      {"-D", "OMB's --ddt (derived datatypes): gmb sends contiguous bytes only"},
      {"-N", "OMB's --nhbr (neighbourhood collectives): gmb has none"},
      {"-T", "OMB's --type (MPI_CHAR, MPI_INT, MPI_FLOAT) applies to the collectives: coll, nbc (-T or --dtype)"},
      {"-I", "OMB's --session (MPI sessions): gmb initialises MPI with MPI_Init"},
      {"-l", "OMB's --in-place applies to the collectives: coll, nbc (-l or --in-place)"},
      {"-z", "OMB's --tail-lat percentiles: gmb records carry p5, p95, min and max of every statistic; no other "
             "percentiles"},
      {"-q", "OMB's --partitions belongs to partitioned point-to-point (osu_partitioned_latency), which gmb does not "
             "have"},
      {"-k", "OMB's --root-rank applies to rooted collectives: coll, nbc (-k fixed:R or --root R)"},
  };
  for (const auto& [name, reason] : refusals)
    if (!parser.declares(name)) parser.refuse({name}, reason);
}

}  // namespace gmb
