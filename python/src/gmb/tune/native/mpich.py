# SPDX-License-Identifier: BSD-3-Clause
"""MPICH's own tuning file: the collective selection JSON that MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE names, in
the syntax of MPICH 4.0 (src/mpi/coll/src/csel.c, the tree of maint/tuning/coll/mpir/generic.json). Each key is a
condition ("collective=allreduce", "comm_type=intra", "comm_size<=4", "avg_msg_size<=65536") or a leaf
("algorithm=MPIR_Allreduce_intra_recursive_doubling": {}); the first key of an object whose condition holds is
followed, with no way back, so every subtree must answer every call: MPICH answers an unanswered one with an assertion.

The file is the library's own selection (the generic JSON compiled into libmpich, read from the library itself) with
the confirmed rules in front of each collective's intra-communicator tree, for the rank count measured: at that rank
count ("comm_size<=N-1" keeps the library's tree below it, "comm_size<=N" then holds) each confirmed size range names
its algorithm and every other size goes to the library's tree. Sizes are those the records count (docs/collectives.md:
S); MPICH's avg_msg_size of allreduce, bcast and reduce is S, its total_msg_size of allgather and alltoall is S.

On one node MPICH 4.0 runs allreduce, bcast and reduce in its shared-memory layer (release_gather) before MPIR's
selection is asked; that layer's own selection file cannot name MPIR's algorithms (and 4.0.2 reads it from
MPIR_CVAR_CH4_COLL_SELECTION_TUNING_JSON_FILE). The search measured those algorithms with
MPIR_CVAR_<COLL>_POSIX_INTRA_ALGORITHM=mpir beside them; the file is loaded with it too, which hands that collective
to MPIR at every size. Other versions are refused: their selection syntax was not checked."""

from __future__ import annotations

import json
import re
from pathlib import Path

from .confirmed import Confirmed

SUPPORTED = ("4.0",)
ALGORITHM = re.compile(r"MPIR_CVAR_(\w+?)_INTRA_ALGORITHM")
SELECTION_FILE = "MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE"
SIZE_CONDITION = {"allreduce": "avg_msg_size", "bcast": "avg_msg_size", "reduce": "avg_msg_size",
                  "allgather": "total_msg_size", "alltoall": "total_msg_size"}
# the start of MPIR's generic selection as libmpich holds it (json_gen.sh strips its white space)
_GENERIC_START = b'{"collective='
_MPIR_LEAF = b'"algorithm=MPIR_'


def unsupported(version: str) -> str | None:
    """Why gmb writes no selection file for this MPICH version (None: it does)."""
    if any(version == v or version.startswith(v + ".") for v in SUPPORTED):
        return None
    return (f"MPICH {version or '(version unknown)'}: gmb writes the collective selection JSON of MPICH "
            f"{', '.join(SUPPORTED)} only (another version's syntax was not checked)")


def generic_selection(library: Path) -> dict | None:
    """MPIR's generic selection tree, as the library file holds it (its ch4 and shared-memory trees name MPIDI's
    compositions; MPIR's names MPIR's algorithms). None where the library holds none that reads."""
    try:
        data = library.read_bytes()
    except OSError:
        return None
    start = data.find(_GENERIC_START)
    while start >= 0:
        end = data.find(b"\0", start)
        text = data[start:end]
        if _MPIR_LEAF in text and b"composition=" not in text:
            try:
                return json.loads(text)
            except ValueError:
                return None
        start = data.find(_GENERIC_START, end)
    return None


def algorithm_of(c: Confirmed) -> tuple[str, str] | None:
    """(collective, MPICH's algorithm name) of a confirmed value that chooses MPIR's algorithm (None: it does not)."""
    for name, value in c.settings.items():
        m = ALGORITHM.fullmatch(name)
        if m and m.group(1).lower() == c.operation:
            return c.operation, value
    return None


def leaf(collective: str, algorithm: str) -> str:
    """The selection's name of MPIR's algorithm: "algorithm=MPIR_Allreduce_intra_recursive_doubling"."""
    return f"algorithm=MPIR_{collective.capitalize()}_intra_{algorithm}"


def companions(rules: list[Confirmed]) -> dict[str, str]:
    """The settings the file must be loaded with: those the confirmed values ran beside that hand a collective to
    MPIR's selection (MPIR_CVAR_<COLL>_POSIX_INTRA_ALGORITHM=mpir)."""
    return {k: v for c in rules for k, v in c.settings.items() if k.endswith("_POSIX_INTRA_ALGORITHM")}


def selection(rules: list[Confirmed], generic: dict, known: set[str]) -> tuple[dict, list[Confirmed], list[str]]:
    """The library's selection tree with ``rules`` (confirmed algorithm choices) in front, those it holds and why any
    was left out;
    ``known``: the algorithm leaves the library names (it answers a leaf it does not know with an assertion)."""
    tree = json.loads(json.dumps(generic))
    kept, left_out, table = [], [], {}
    for c in rules:
        coll, name = algorithm_of(c)
        where = tree.get(f"collective={coll}", {})
        why = ("no rank count recorded" if not c.ranks else f"{leaf(coll, name)} is not a leaf this library names"
               if leaf(coll, name) not in known else f"the library's tree has no comm_type=intra for {coll}"
               if "comm_type=intra" not in where else "")
        if why:
            left_out.append(f"{c.configuration}, {c.path}: {c.arm}: not in the selection file ({why})")
            continue
        table.setdefault(coll, {}).setdefault(c.ranks, []).append(c)
        kept.append(c)
    for coll, by_ranks in table.items():
        where = tree[f"collective={coll}"]
        where["comm_type=intra"] = _with_rules(where["comm_type=intra"], coll, by_ranks)
    return tree, kept, left_out


def _with_rules(library_tree: dict, coll: str, by_ranks: dict[int, list[Confirmed]]) -> dict:
    """The intra-communicator tree with, per rank count measured, its confirmed size ranges first."""
    out, condition, below = {}, SIZE_CONDITION[coll], 0
    for ranks in sorted(by_ranks):
        if ranks - 1 > below:  # the rank counts between those measured keep the library's tree
            out[f"comm_size<={ranks - 1}"] = library_tree
        below = ranks
        sized = {}
        for c in sorted(by_ranks[ranks], key=lambda c: c.low):
            sized[f"{condition}<{c.low}"] = library_tree
            sized[f"{condition}<={c.high}"] = {leaf(coll, algorithm_of(c)[1]): {}}
        sized[f"{condition}=any"] = library_tree
        out[f"comm_size<={ranks}"] = sized
    out["comm_size=any"] = library_tree
    return out


def known_leaves(library: Path) -> set[str]:
    """The algorithm leaves the library's selection parser names ("algorithm=MPIR_..."), read from the library."""
    try:
        data = library.read_bytes()
    except OSError:
        return set()
    return {m.decode() for m in re.findall(rb"algorithm=MPIR_\w+", data)}


def selection_text(head: list[str], tree: dict) -> str:
    """The file: the header as a comment (MPICH parses the file with json-c, which takes C comments; a key would be
    read as a condition), then the tree. MPICH maps the file and hands it to json-c as a C string: the page's zero
    fill ends it, so its length must not be a whole number of pages."""
    text = "/*\n" + "".join(f" * {line.replace('*/', '* /')}\n" for line in head) + " */\n" + \
        json.dumps(tree, indent=1) + "\n"
    return text + " \n" if len(text.encode()) % 4096 == 0 else text
