# SPDX-License-Identifier: BSD-3-Clause
"""The environment of a block's launches for one library: the block's ``env``, once per setting set with the set
over it, less the sets that would not apply (an Open MPI setting the library's ``--mca`` outranks) or whose results
could not be told from another set's."""

from __future__ import annotations

import json

from ..machine.launchers import mca_env
from ..machine.mpilibs import MpiLibrary
from ..results import run_conditions
from .spec import Block


def environments(bi: int, block: Block, lib: MpiLibrary, skipped: list) -> list[tuple[str, dict[str, str]]]:
    """(launch id suffix, environment) of each setting set of a block for one library: the block's env with the set
    over it (".s1", ".s2" ...), or the block's env alone ("") without settings; one the library would not apply, or
    whose results would be taken for another set's (they differ in no variable the results keep as a setting), is
    skipped with the reason."""
    out, recorded = [], {}
    for k, settings in [(None, {})] if block.settings is None else enumerate(block.settings, 1):
        env = {**block.env, **settings}
        # what the records will say: the library's own env, the block's over it
        kept = json.dumps(run_conditions.settings({"environment": {**lib.env, **env}}, lib.transport), sort_keys=True)
        refused = outranked(env, lib.launcher_args)
        if not refused and kept in recorded:
            j, other = recorded[kept]
            names = sorted(v for v in env.keys() | other.keys() if env.get(v) != other.get(v))
            own = [f"{v}={lib.env[v]}" for v in names if v in lib.env]
            refused = f"its results would be taken for those of settings #{j}: " + (
                f"{lib.name}'s own env sets {', '.join(own)}" if own else
                f"{', '.join(names)} {'is' if len(names) == 1 else 'are'} not among the settings {lib.name}'s results "
                f"keep")
        if refused:
            skipped.append((lib.name, f"block {bi + 1}" + (f" settings #{k}" if k else ""), refused))
        else:
            recorded[kept] = (k, env)
            out.append((f".s{k}" if k else "", env))
    return out


def outranked(env: dict[str, str], launcher_args: list[str]) -> str | None:
    """Why ``env`` would not all apply under these launcher arguments: an OMPI_MCA_ variable they give another value
    (mpirun's --mca outranks the environment; under srun they become those variables, set after it); else None."""
    given = mca_env(launcher_args)
    clash = [k for k in env if k in given and given[k] != env[k]]
    if not clash:
        return None
    ours = ", ".join(f"{k}={env[k]}" for k in clash)
    theirs = " ".join(f"--mca {k.removeprefix('OMPI_MCA_')} {given[k]}" for k in clash)
    return (f"{ours} {'is' if len(clash) == 1 else 'are'} outranked by the library's launcher arguments ({theirs}): "
            f"declare a library configuration without it")
