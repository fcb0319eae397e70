# SPDX-License-Identifier: BSD-3-Clause
"""The answer of `gmb tune` in the form the libraries read themselves, written beside tune.toml: Open MPI's coll/tuned
rules file and mca-params.conf (openmpi.py), MPICH's collective selection JSON (mpich.py), UCX's ucx.conf (ucx.py),
NCCL's configuration file (nccl.py). Only confirmed recommendations go in, each line with the gain it rests on; a
setting a file cannot hold as it was confirmed (a value better at some sizes and proven worse at others, two values
of one knob, a version whose format gmb does not know) is left out, and why said.

``native.json`` lists what was written, how each configuration loads its files (the settings that name them), and
which recommendations they carry; ``tune-native.toml`` is the campaign that measures them loaded, for
`gmb tune --verify` (verify.py)."""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field
from pathlib import Path

from ...outputs import OutputError, write_new
from . import mpich, nccl, openmpi, ucx
from .confirmed import Confirmed, commented, confirmed, header, name_value_text
from .libraries import Library, library_of
from .manifest import CAMPAIGN, write_manifest


@dataclass
class Written:
    """One configuration's native files: each written file (what it is, its path, the settings that load it) and the
    recommendations they carry; what was left out, and why."""
    configuration: str
    files: list[dict] = field(default_factory=list)
    covers: list[Confirmed] = field(default_factory=list)
    left_out: list[str] = field(default_factory=list)

    @property
    def load(self) -> dict[str, str]:
        return {k: v for f in self.files for k, v in f["load"].items()}


def write_native(outdir: Path, result: dict, races: list, confs: dict, st) -> tuple[list[str], list[str]]:
    """Every configuration's native files of the answer ``result`` (``races``: the search's, ``confs``: its
    configurations by name), the manifest and the campaign that measures them loaded. Returns the lines to print
    (each file and how to load it, what was left out) and what could not be written."""
    by_conf: dict[str, list[Confirmed]] = {}
    for c in confirmed(result):
        by_conf.setdefault(c.configuration, []).append(c)
    written, errors = [], []
    for name, rules in by_conf.items():
        w = Written(name)
        try:
            _write_configuration(outdir, library_of(confs[name], st), rules, w)
        except (OutputError, FileExistsError, OSError) as exc:
            errors.append(str(exc))
        written.append(w)
    if not written:
        return [], errors
    try:
        write_manifest(outdir, written, races)
    except (OutputError, FileExistsError, OSError) as exc:
        errors.append(str(exc))
    return _printout(outdir, written), errors


def _write_configuration(outdir: Path, lib: Library, rules: list[Confirmed], w: Written) -> None:
    """The files of one configuration: its algorithm rules in the library's selection file, its other settings in
    the configuration files of the layers that read them."""
    algorithms = [c for c in rules if lib.algorithm_of(c)]
    if algorithms:
        _write_selection(outdir, lib, _one_per_collective(algorithms, w), w)
    by_layer = _global_settings(rules, lib, w)
    for layer, settings in by_layer.items():
        _write_settings(outdir, lib, layer, settings, w)


def _one_per_collective(rules: list[Confirmed], w: Written) -> list[Confirmed]:
    """Of the races of one collective and rank count (blocks on other memory, say), the first: one file holds one
    choice per size."""
    kept, first = [], {}
    for c in rules:
        key = (c.operation, c.ranks)
        if first.setdefault(key, c).race != c.race:
            w.left_out.append(f"{c.configuration}, {c.path}: {c.arm}: not written: {c.operation} on {c.ranks} ranks "
                              f"is written from {first[key].path} already")
            continue
        kept.append(c)
    return kept


def _write_selection(outdir: Path, lib: Library, rules: list[Confirmed], w: Written) -> None:
    """The library's selection file of the confirmed algorithm choices (Open MPI's rules file, MPICH's JSON)."""
    refused = lib.selection_refused()
    if refused:
        w.left_out += [f"{c.configuration}, {c.path}: {c.arm}: not written: {refused}" for c in rules]
        return
    made = _openmpi_rules(outdir, lib, rules, w) if lib.family == "openmpi" else _mpich_selection(outdir, lib, rules, w)
    if made is None:
        return
    what, path, text, load, kept, left_out = made
    w.left_out += left_out
    if kept:
        write_new(path, text)
        w.files.append({"what": what, "file": str(path), "load": load, "rules": len(kept)})
        w.covers += kept


def _head(lib: Library, what: str, kept: list[Confirmed]) -> list[str]:
    return header(lib.machine, lib.label, what, [f"{c.measured_at()}, {c.arm}: {c.gain_text()}" for c in kept])


def _openmpi_rules(outdir: Path, lib: Library, rules: list[Confirmed], w: Written) -> tuple:
    what = "Open MPI coll/tuned rules"
    body, kept, left_out = openmpi.rules_file(rules, lib.algorithm_numbers())
    path = outdir / f"{w.configuration}-coll-tuned-rules.txt"
    text = "\n".join(commented(_head(lib, "Open MPI coll/tuned dynamic rules", kept))) + "\n" + body
    load = {openmpi.DYNAMIC_RULES: "1", openmpi.RULES_FILE: str(path.resolve())}
    return what, path, text, load, kept, left_out


def _mpich_selection(outdir: Path, lib: Library, rules: list[Confirmed], w: Written) -> tuple | None:
    generic = lib.generic_selection()
    if generic is None:
        w.left_out += [f"{c.configuration}, {c.path}: {c.arm}: not written: {lib.library_file or 'its library'} "
                       "holds no selection tree gmb can read" for c in rules]
        return None
    tree, kept, left_out = mpich.selection(rules, generic, lib.known_leaves())
    path = outdir / f"{w.configuration}-coll-selection.json"
    text = mpich.selection_text(_head(lib, "MPICH collective selection", kept), tree)
    load = {mpich.SELECTION_FILE: str(path.resolve()), **mpich.companions(kept)}
    return "MPICH collective selection", path, text, load, kept, left_out


# the layers whose own configuration file holds a setting, by the setting's prefix
LAYER_PREFIXES = (("OMPI_MCA_", "openmpi"), ("UCX_", "ucx"), ("NCCL_", "nccl"))


def _global_settings(rules: list[Confirmed], lib: Library, w: Written) -> dict[str, dict]:
    """The confirmed settings that are no algorithm choice, by the layer whose file holds them: name -> (value, the
    recommendations it rests on). A file applies a setting at every size and path, so a value proven worse somewhere,
    or one knob recommended at two values, is left out."""
    out: dict[str, dict] = {}
    clash: set[str] = set()
    for c in rules:
        for name, value in c.settings.items():
            if lib.is_selection_setting(c, name):
                continue
            layer = next((lay for prefix, lay in LAYER_PREFIXES if name.startswith(prefix)), None)
            why = ("no file of the library holds it" if layer is None or (layer == "openmpi" and
                                                                         lib.family != "openmpi") else
                   f"proven worse at {len(c.worse)} size(s) of {c.path}: a file applies it at every size"
                   if c.worse else "")
            if why:
                w.left_out.append(f"{c.configuration}, {c.path}: {name}={value}: not written: {why}")
                continue
            got = out.setdefault(layer, {})
            if name in got and got[name][0] != value:
                clash.add(name)
            got.setdefault(name, (value, []))[1].append(c)
    for layer in out.values():
        for name in clash & set(layer):
            w.left_out.append(f"{w.configuration}: {name}: not written: recommended at several values "
                              f"({', '.join(sorted({c.settings[name] for c in rules if name in c.settings}))})")
            del layer[name]
    return {layer: settings for layer, settings in out.items() if settings}


def _write_settings(outdir: Path, lib: Library, layer: str, settings: dict, w: Written) -> None:
    lines = [f"{name}={value}: " + "; ".join(f"{c.measured_at()} {c.gain_text()}" for c in rests_on)
             for name, (value, rests_on) in sorted(settings.items())]
    if layer == "ucx":
        refused = ucx.unsupported(lib.ucx_version())
        if refused:
            w.left_out += [f"{w.configuration}: {name}: not written: {refused}" for name in settings]
            return
        directory = outdir / f"{w.configuration}-ucx"  # UCX reads the file of its name from UCX_CONFIG_DIR
        if directory.exists():
            raise FileExistsError(f"{directory} exists; not overwriting")
        directory.mkdir()
        path = directory / ucx.FILE_NAME
        text = name_value_text(settings, commented(header(lib.machine, lib.label, "UCX configuration", lines)))
        load, what = {ucx.CONFIG_DIR: str(directory.resolve())}, "UCX configuration"
    elif layer == "nccl":
        path = outdir / f"{w.configuration}-nccl.conf"
        text = name_value_text(settings, commented(header(lib.machine, lib.label, "NCCL configuration", lines)))
        load, what = {nccl.CONF_FILE: str(path.resolve())}, "NCCL configuration"
    else:
        path = outdir / f"{w.configuration}-mca-params.conf"
        text = openmpi.mca_params(settings, commented(header(lib.machine, lib.label, "Open MPI MCA parameters",
                                                             lines)))
        load = {openmpi.PARAM_FILES: openmpi.param_files(str(path.resolve()), lib.param_files_default())}
        what = "Open MPI MCA parameters"
    write_new(path, text)
    w.files.append({"what": what, "file": str(path), "load": load, "rules": len(settings)})
    w.covers += [c for _, rests_on in settings.values() for c in rests_on if c not in w.covers]


def _printout(outdir: Path, written: list[Written]) -> list[str]:
    """One line per file (what, where, how to load it), one per setting left out, then how to measure them."""
    lines = []
    for w in written:
        for f in w.files:
            lines.append(f"gmb tune: {w.configuration}: {f['what']} ({f['rules']} confirmed): {f['file']}; load: "
                         + " ".join(f"{k}={shlex.quote(v)}" for k, v in f["load"].items()))
        lines += [f"gmb tune: {why}" for why in w.left_out]
    if any(w.files for w in written):
        lines.append(f"gmb tune: measure them loaded: gmb run --config {outdir / 'tune-libraries.toml'} --no-detect "
                     f"{outdir / CAMPAIGN}; then: gmb tune --verify {outdir} RUN_DIR")
    return lines
