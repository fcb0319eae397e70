# SPDX-License-Identifier: BSD-3-Clause
"""Open MPI's own tuning files: the coll/tuned dynamic rules file (coll_tuned_use_dynamic_rules=1
coll_tuned_dynamic_rules_filename=FILE) with the confirmed per-size algorithm of each collective, and an
mca-params.conf (``name = value``, loaded through mca_base_param_files) with the other confirmed MCA settings.

The rules file is the format Open MPI 4.1 and 5.0 read (ompi/mca/coll/tuned/coll_tuned_dynamic_file.c): numbers
only, ``#`` to the end of a line a comment; the number of collectives, then per collective its id (COLLTYPE_T of
ompi/mca/coll/base/coll_base_functions.h: allgather 0, allreduce 2, alltoall 3, bcast 7, reduce 11) and its number of
communicator sizes, per communicator size the size and its number of message sizes, per message size ``size
algorithm fan-in/out segment-size``. The rule of the largest communicator size at or below a communicator's applies
(the first one below them all), and of the largest message size at or below a message's; algorithm 0 leaves the choice
to Open MPI's fixed decision. The message size is the one the records count (docs/collectives.md: S, what
coll_tuned_decision_dynamic.c computes for each of these collectives). 5.0.x also reads an optional
``rule-file-version-2`` header and a fifth column, not written here: the classic file reads the same in both. Other
versions are refused: their format was not checked (6.0 reads JSON rules)."""

from __future__ import annotations

import re

from .confirmed import Confirmed

SUPPORTED = ("4.1", "5.0")
COLLECTIVE_IDS = {"allgather": 0, "allreduce": 2, "alltoall": 3, "bcast": 7, "reduce": 11}
ALGORITHM = re.compile(r"OMPI_MCA_coll_tuned_(\w+?)_algorithm")
DYNAMIC_RULES = "OMPI_MCA_coll_tuned_use_dynamic_rules"
RULES_FILE = "OMPI_MCA_coll_tuned_dynamic_rules_filename"
PARAM_FILES = "OMPI_MCA_mca_base_param_files"
_ENUMERATOR = re.compile(r"^mca:coll:tuned:param:coll_tuned_(\w+?)_algorithm:enumerator:value:(\d+):(\S+)$",
                         re.MULTILINE)


def unsupported(version: str) -> str | None:
    """Why gmb writes no rules file for this Open MPI version (None: it does)."""
    if any(version == v or version.startswith(v + ".") for v in SUPPORTED):
        return None
    return (f"Open MPI {version or '(version unknown)'}: gmb writes the coll/tuned rules file of Open MPI "
            f"{' and '.join(SUPPORTED)} only (another version's format was not checked)")


def parse_numbers(text: str) -> dict[str, dict[str, int]]:
    """Collective -> algorithm name -> number, as ompi_info --parsable enumerates coll_tuned_*_algorithm (the rules
    file takes numbers)."""
    out: dict[str, dict[str, int]] = {}
    for coll, number, name in _ENUMERATOR.findall(text):
        out.setdefault(coll, {})[name] = int(number)
    return out


def algorithm_of(c: Confirmed) -> tuple[str, str] | None:
    """(collective, algorithm) of a confirmed value that chooses a coll/tuned algorithm (None: it does not)."""
    for name, value in c.settings.items():
        m = ALGORITHM.fullmatch(name)
        if m and m.group(1) == c.operation:
            return m.group(1), value
    return None


def rules_file(rules: list[Confirmed], numbers: dict[str, dict[str, int]]) -> tuple[str, list[Confirmed], list[str]]:
    """The rules of ``rules`` (confirmed algorithm choices; the file less its header), those it holds and why any was
    left out. Per
    collective and rank
    count: algorithm 0 (Open MPI's own choice) below the first range, the algorithm over each range, 0 again from the
    byte after it; rank counts the search did not measure keep Open MPI's choice."""
    kept, left_out, table = [], [], {}
    for c in rules:
        coll, name = algorithm_of(c)
        number = int(name) if name.isdigit() else numbers.get(coll, {}).get(name)
        if coll not in COLLECTIVE_IDS or number is None or not c.ranks:
            left_out.append(f"{c.configuration}, {c.path}: {c.arm}: not in the rules file ("
                            + (f"{coll} has no collective id" if coll not in COLLECTIVE_IDS else
                               f"ompi_info lists no {name} for {coll}" if number is None else
                               "no rank count recorded") + ")")
            continue
        table.setdefault(coll, {}).setdefault(c.ranks, []).append((c, number))
        kept.append(c)
    lines = [f"{len(table)}  # collectives"]
    for coll in sorted(table, key=COLLECTIVE_IDS.get):
        sizes = _communicator_sizes(table[coll])
        lines += [f"{COLLECTIVE_IDS[coll]}  # {coll}", f"{len(sizes)}  # communicator sizes"]
        for comm_size, messages in sizes:
            lines += [f"{comm_size} {len(messages)}  # from {comm_size} ranks: {len(messages)} message size rule(s)"]
            lines += [f"{size} {alg} 0 0" + (f"  # {why}" if why else "") for size, alg, why in messages]
    return "\n".join(lines) + "\n", kept, left_out


def _communicator_sizes(by_ranks: dict[int, list]) -> list[tuple[int, list]]:
    """Per communicator size, its message rules: (size, algorithm, why); Open MPI's choice (0) at every
    communicator size the search did not measure, from 0 up."""
    out, last = [(0, [(0, 0, "Open MPI's own choice")])], None
    for ranks in sorted(by_ranks):
        if last is not None and last + 1 < ranks:
            out.append((last + 1, [(0, 0, "Open MPI's own choice")]))
        messages = [(0, 0, "Open MPI's own choice")]
        for c, number in sorted(by_ranks[ranks], key=lambda cn: cn[0].low):
            if messages[-1][0] == c.low:
                messages.pop()
            messages += [(c.low, number, f"{c.arm}: {c.gain_text()}"), (c.high + 1, 0, "Open MPI's own choice")]
        out.append((ranks, messages))
        last = ranks
    out.append((last + 1, [(0, 0, "Open MPI's own choice")]))
    return [(size, rules) for k, (size, rules) in enumerate(out) if k + 1 == len(out) or out[k + 1][0] != size]


def mca_params(settings: dict[str, tuple[str, list[Confirmed]]], head: list[str]) -> str:
    """An mca-params.conf: ``name = value`` per confirmed MCA setting (``settings``: OMPI_MCA_<name> -> value and the
    recommendations it rests on)."""
    lines = list(head)
    for name, (value, rests_on) in sorted(settings.items()):
        lines.append(f"# {name}={value}: " + "; ".join(f"{c.path} {c.gain_text()}" for c in rests_on))
        lines.append(f"{name.removeprefix('OMPI_MCA_')} = {value}")
    return "\n".join(lines) + "\n"


def param_files(own: str, default: str | None) -> str:
    """mca_base_param_files with ``own`` first and the library's own files after it (its default, as ompi_info
    lists it: the system file holds the site's settings, Debian's pml = ^ucx among them)."""
    return ",".join([own, *([default] if default else [])])
