# SPDX-License-Identifier: BSD-3-Clause
"""The knobs `gmb tune` offers for one library configuration: its family's catalogue (families.py, knobs.py) for the
layers it runs on (an Open MPI with pml ob1 gets ob1's, with pml ucx UCX's; NCCL gets NCCL's), checked against what
the installed library lists of its own parameters, then the knobs a user added (the libraries file's ``knobs``, the
command line's --knob)."""

from __future__ import annotations

from fnmatch import fnmatchcase
from pathlib import Path

from ..engine.configurations import Configuration
from ..errors import UsageError
from ..machine import families
from ..machine.knobs import NCCL_KNOBS, Knob, Listing, Offer, offer, user_knobs
from ..machine.launchers import mca_env


def configuration_settings(conf: Configuration) -> dict[str, str]:
    """The settings a configuration runs with: its launcher's --mca parameters (as OMPI_MCA_ variables) and its
    environment."""
    return {**mca_env(conf.library.launcher_args), **conf.library.env}


# where a knob comes from when the command line adds it (--knob NAME=VALUE): asked for by name, so always searched
COMMAND_LINE = "--knob"
# a knob a user adds by a name of these prefixes belongs to that layer (UCX and NCCL read only their own variables):
# a configuration that does not run on it is not offered it
LAYER_PREFIXES = (("UCX_", "ucx"), ("NCCL_", "nccl"))


def offers(conf: Configuration, extra: tuple[Knob, ...] = (), listings_cache: dict | None = None) -> list[Offer]:
    """Every knob considered for ``conf``, offered or not (Offer.refused says why): the catalogue's of the layers
    it runs on, those of the libraries file and ``extra`` (the command line's, a campaign file's). The layers are
    those the configuration's settings name, else those the library's own listing selects (Open MPI's pml selection in
    its parameter files: Debian's "^ucx" runs ob1)."""
    lib = conf.library
    family = families.of(lib.family)
    own = configuration_settings(conf)
    if lib.transport == "nccl":
        layers, listings, catalogue = {"nccl"}, {}, NCCL_KNOBS
    else:
        text = str((conf.description.mpi or {}).get("library_version", "")) if conf.description else ""
        listings = _listings(conf, family, listings_cache if listings_cache is not None else {})
        listed = {name: value for listing in listings.values() for name, value in listing.defaults.items()}
        layers = family.knob_layers({**listed, **own}, text) if family.knob_layers else set()
        catalogue = family.knobs
    known = lib.transport == "nccl" or family.knob_layers is not None  # what it runs on is known

    def considered(knob: Knob, layer: str | None, strict: bool = True) -> Offer:
        if (strict or known) and layer is not None and layer not in layers:
            return Offer(knob, None, (), refused=f"belongs to {layer}, which this configuration does not run on "
                                                 f"({', '.join(sorted(layers))})")
        return _not_set_already(offer(knob, listings), own)

    added = user_knobs(lib.knobs, f"the libraries file ({lib.name})") + tuple(extra)
    return [considered(knob, knob.layer) for knob in catalogue] + [considered(knob, _layer_of(knob.name), False)
                                                                   for knob in added]


def _layer_of(name: str) -> str | None:
    """The layer a knob a user added belongs to by its name (LAYER_PREFIXES); None: any configuration's."""
    return next((layer for prefix, layer in LAYER_PREFIXES if name.startswith(prefix)), None)


def narrowed(all_offers: list[Offer], only: tuple[str, ...]) -> list[Offer]:
    """The offers with --knobs ``only`` applied: a knob whose name matches none of its patterns is left out of the
    search, unless the command line added it by name (--knob)."""
    return [_chosen(o, only) for o in all_offers]


def _chosen(o: Offer, only: tuple[str, ...]) -> Offer:
    if not only or not o.offered or o.knob.source == COMMAND_LINE or any(fnmatchcase(o.knob.name, p) for p in only):
        return o
    return Offer(o.knob, o.default, (), refused=f"not among --knobs {','.join(only)}", note=o.note)


def check_knob_patterns(only: tuple[str, ...], all_offers: list[list[Offer]]) -> None:
    """UsageError when a --knobs pattern names no knob of any configuration (a typo, or a knob of another family),
    listing the knobs offered (``all_offers``: each configuration's offers before --knobs narrowed them)."""
    names = {o.knob.name for conf_offers in all_offers for o in conf_offers}
    unmatched = [p for p in only if not any(fnmatchcase(n, p) for n in names)]
    if unmatched:
        offered_here = sorted({o.knob.name for conf_offers in all_offers for o in conf_offers if o.offered})
        raise UsageError(f"--knobs: {', '.join(unmatched)} names no knob of these configurations (offered here: "
                         f"{', '.join(offered_here) or 'none'}; `gmb tune --list` says why the others are not)")


def nothing_to_try(conf_offers: list[Offer], kind: str) -> str:
    """Why a configuration has no knob value to try on a path of ``kind`` (its offers after --knobs)."""
    offered_any = [o for o in conf_offers if o.offered]
    if not offered_any:
        narrowed_out = [o.knob.name for o in conf_offers if o.refused and o.refused.startswith("not among --knobs")]
        return "no knob is offered to this configuration" + (
            f" among --knobs (it is offered {', '.join(narrowed_out)})" if narrowed_out else
            " (`gmb tune --list` says why)")
    return ("none of the knobs offered to this configuration affects a " + kind + " path ("
            + "; ".join(f"{o.knob.name}: {', '.join(o.knob.paths)}" for o in offered_any) + ")")


def _not_set_already(o: Offer, own: dict[str, str]) -> Offer:
    """A knob the configuration itself sets is its configuration, not a search: refused, with the value it has."""
    if o.knob.name in own and o.refused is None:
        return Offer(o.knob, own[o.knob.name], (), refused=f"the configuration sets it ({o.knob.name}="
                                                            f"{own[o.knob.name]}): declare another configuration "
                                                            "to compare values")
    return o


def _listings(conf: Configuration, family: families.Family, cache: dict) -> dict[str, Listing]:
    """The family's listings of the installation's parameters, asked once per launcher (one installation, several
    configurations)."""
    if family.knob_listings is None:
        return {}
    lib = conf.library
    if lib.launcher_path not in cache:
        cache[lib.launcher_path] = family.knob_listings(Path(lib.launcher_path).parent, lib.process_env())
    return cache[lib.launcher_path]


def offered(all_offers: list[Offer], kind: str, operations: list[str] | None = None,
            algorithms_only: bool = False) -> list[Offer]:
    """The offers that may change a path of ``kind`` (knobs.PATHS) measuring ``operations`` (a collective's): a knob
    of some operations (an algorithm choice) only where the path measures one of them; on a path that only exists
    for its operation's algorithms (paths.TunePath.algorithms_only), those knobs alone."""
    def fits(k) -> bool:
        if not k.operations:
            return not algorithms_only
        return bool(set(k.operations) & set(operations or ()))
    return [o for o in all_offers if o.offered and kind in o.knob.paths and fits(o.knob)]


def path_offers(all_offers: list[Offer], path) -> list[Offer]:
    """The offers that may change ``path`` (paths.TunePath)."""
    return offered(all_offers, path.kind, path.block.operations, path.algorithms_only)


def format_offers(name: str, all_offers: list[Offer]) -> list[str]:
    """`gmb tune --list`: one line per knob, offered (default, values, paths) or not (why)."""
    lines = [f"{name}:"]
    for o in all_offers:
        k = o.knob
        if o.offered:
            default = "not listed" if o.default is None else o.default or "(empty)"
            lines.append(f"  {k.name:<44} default {default}; tries {', '.join(o.values)}; paths "
                         f"{', '.join(k.paths)}" + (f"; with {', '.join(f'{n}={v}' for n, v in k.together)}"
                                                    if k.together else "") + f" ({o.note})")
        else:
            lines.append(f"  {k.name:<44} not offered: {o.refused}")
    return lines
