"""Seeded mutants of real mechanism files, loaded in worker processes with a
time and memory limit (issue 14: no input crashes, hangs or yields NaN).

A mutant is named by (mechanism, file kind, seed): the worker rebuilds it
from the seed, so nothing but names and verdicts crosses processes.  Each
worker runs many mutants, each under a time limit: ``TIME_LIMIT_S`` of CPU
time (a profiling timer: on a busy machine wall time says little) and
``WALL_LIMIT_S`` of wall time (a blocked process); the pool's workers carry
an address-space limit (``resource.setrlimit``).  They are started fresh (``WORKER_START``), not forked
from the test session, whose address space would count against that limit.

Verdicts: 'accepted' (loaded; reference outputs finite at states inside the
thermo range; a sample of the small mechanisms' also compiled and
simulated), 'rejected' (a
``SingeInputError`` whose every problem has file and line), and the
failures: 'escape' (any other exception), 'unlocated' (a rejection without
file:line), 'hang' (over the time limit), 'nonfinite' (an accepted mutant
with a NaN or infinite output).

The mechanisms: the bundled and shared CHEMKIN ones (chem, thermo,
transport, qss files), Cantera's h2o2.yaml and gri30.yaml, and the NASA9 air
example (nasa9_air.py) both as Cantera YAML and as CHEMKIN with a NASA9
therm.dat.  YAML files get mutations of their own besides the textual ones
(a value of another kind, a key moved, an entry re-indented).  Adding a file
kind is one entry in ``MECHANISMS`` and, where its text needs its own
mutations, one in ``KIND_MUTATIONS``.
"""

from __future__ import annotations

import concurrent.futures
import multiprocessing
import importlib.util
import os
import pathlib
import random
import re
import resource
import shutil
import signal
import tempfile
import time
import traceback
from dataclasses import dataclass
from typing import Callable

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]
SHARED = pathlib.Path(os.environ.get("SINGE_SHARED", ROOT.parent / "shared")) / "mechanisms"

TIME_LIMIT_S = 10  # CPU seconds per mutant
WALL_LIMIT_S = 120  # wall seconds per mutant (the machine may be shared)
MEMORY_LIMIT_BYTES = 3 * 1024 ** 3
FAILURES = ("escape", "unlocated", "hang", "nonfinite")


@dataclass(frozen=True)
class MechanismFiles:
    """A mechanism's files by kind ('chem', 'thermo', 'transport', 'qss', or
    'yaml' for a Cantera YAML file), how often its mutants are drawn (big
    mechanisms load slowly), the share of its accepted mutants also compiled
    and simulated, and the function that writes the files where they are
    generated rather than found."""

    name: str
    folder: pathlib.Path
    files: dict
    weight: float
    compile_share: float = 0.0
    build: Callable[[pathlib.Path], object] | None = None

    @property
    def available(self) -> bool:
        return all((self.folder / f).is_file() for f in self.files.values())

    @property
    def main(self) -> str:
        """The file singe.load_mechanism is given."""
        return self.files.get("chem") or self.files["yaml"]

    def prepare(self) -> None:
        """Write generated files once (into a fresh folder renamed into place)."""
        if self.build is None or self.available:
            return
        self.folder.parent.mkdir(parents=True, exist_ok=True)
        staging = pathlib.Path(tempfile.mkdtemp(prefix=self.folder.name, dir=self.folder.parent))
        self.build(staging)
        try:
            staging.rename(self.folder)
        except OSError:  # another process got there first
            shutil.rmtree(staging, ignore_errors=True)


def _build_air_nasa9(folder: pathlib.Path) -> None:
    from nasa9_air import write_air_nasa9

    write_air_nasa9(folder, thermo_name="therm.dat")


CANTERA_DATA = pathlib.Path(importlib.util.find_spec("cantera").submodule_search_locations[0]) / "data"
GENERATED = pathlib.Path(tempfile.gettempdir()) / f"singe-fuzz-{os.getuid()}"


MECHANISMS = (
    MechanismFiles("h2o2", ROOT / "mechanisms" / "h2o2",
                   {"chem": "h2o2.inp", "thermo": "therm.dat", "transport": "tran.dat"}, 12, 0.1),
    MechanismFiles("gri30", ROOT / "mechanisms" / "gri30",
                   {"chem": "gri30.inp", "thermo": "therm.dat", "transport": "tran.dat"}, 2, 0.05),
    MechanismFiles("dme", SHARED / "dme", {"chem": "dme.inp", "thermo": "therm.dat", "transport": "tran.dat",
                                           "qss": "dme.qss"}, 1.5),
    MechanismFiles("dodecane", SHARED / "dodecane_qss", {"chem": "dodecane.inp", "thermo": "therm.dat",
                                                         "transport": "tran.dat", "qss": "dodecane.qss"}, 1),
    MechanismFiles("heptane", SHARED / "heptane", {"chem": "heptane.inp", "thermo": "therm.dat",
                                                   "transport": "tran.dat", "qss": "heptane.qss"}, 0.5),
    MechanismFiles("h2o2-yaml", CANTERA_DATA, {"yaml": "h2o2.yaml"}, 8, 0.1),
    MechanismFiles("gri30-yaml", CANTERA_DATA, {"yaml": "gri30.yaml"}, 1.5),
    MechanismFiles("air9-yaml", GENERATED / "air9", {"yaml": "air9.yaml"}, 3, 0.1, _build_air_nasa9),
    MechanismFiles("air9", GENERATED / "air9", {"chem": "air9.inp", "thermo": "therm.dat", "transport": "air9.tran"},
                   3, 0.1, _build_air_nasa9),
)


# -- mutations ---------------------------------------------------------------

NUMBER = re.compile(r"(?<![\w.])[-+]?(?:\d+\.?\d*|\.\d+)(?:[eEdD][-+]?\d+)?")
ODD_NUMBERS = ("1E400", "-1E400", "1.0D+999", "1e-400", "0", "-0.0", "200", "-200", "-1e7", "1e300", "-1",
               "1E+30", "99999999999999999999", "0.0", "5", "3.5", "-3.5")
ODD_SPACES = ("\xa0", "\f", "\v", "\u2003", "\u3000", "\x1c", "\x85", "\t")


def _lines(text: str) -> list[str]:
    return text.split("\n")


def delete_line(text, rng):
    lines = _lines(text)
    del lines[rng.randrange(len(lines))]
    return "\n".join(lines)


def duplicate_line(text, rng):
    lines = _lines(text)
    i = rng.randrange(len(lines))
    lines.insert(i, lines[i])
    return "\n".join(lines)


def swap_lines(text, rng):
    lines = _lines(text)
    i = rng.randrange(len(lines))
    j = min(len(lines) - 1, max(0, i + rng.choice((-3, -2, -1, 1, 2, 3, rng.randrange(len(lines)) - i))))
    lines[i], lines[j] = lines[j], lines[i]
    return "\n".join(lines)


def truncate(text, rng):
    return text[:rng.randrange(len(text))]


def flip_byte(text, rng):
    i = rng.randrange(len(text))
    ascii_byte, high_byte = rng.randrange(0, 128), rng.randrange(128, 256)
    flipped = ord(text[i]) ^ (1 << rng.randrange(7))
    replacement = chr(rng.choice((ascii_byte, high_byte, flipped)))
    return text[:i] + replacement + text[i + 1:]


def corrupt_number(text, rng):
    numbers = list(NUMBER.finditer(text))
    if not numbers:
        return flip_byte(text, rng)
    match = rng.choice(numbers)
    if rng.random() < 0.6:
        new = rng.choice(ODD_NUMBERS)
    else:
        new = f"{float(match.group().replace('D', 'E').replace('d', 'e')) * rng.choice((-1, 10, 1e10, 1e-10)):.6g}"
    if rng.random() < 0.5:  # keep fixed columns where the file has them
        new = new.rjust(len(match.group()))[-len(match.group()):] if len(new) > len(match.group()) else \
            new.rjust(len(match.group()))
    return text[:match.start()] + new + text[match.end():]


def long_line(text, rng):
    lines = _lines(text)
    i = rng.randrange(len(lines))
    size = rng.choice((2_000, 19_000, 25_000, 300_000))
    unit = lines[i] + " " if lines[i].strip() else "H2 "
    if rng.random() < 0.5:
        lines[i] = (unit * (size // len(unit) + 1))[:size]
    else:
        lines.insert(i, (unit.rstrip() + " ") * (size // len(unit) + 1))
    return "\n".join(lines)


def odd_whitespace(text, rng):
    space = rng.choice(ODD_SPACES)
    if rng.random() < 0.3:
        lines = _lines(text)
        lines.insert(rng.randrange(len(lines)), space * rng.randrange(1, 4))
        return "\n".join(lines)
    spaces = [m.start() for m in re.finditer(" ", text)]
    for i in rng.sample(spaces, min(len(spaces), rng.randrange(1, 4))):
        text = text[:i] + space + text[i + 1:]
    return text


YAML_KEY = re.compile(r"^([ -]*)([\w-]+): *(.*)$", re.MULTILINE)
ODD_YAML_VALUES = ("[]", "{}", "~", "[1, 2]", "x", "-1", "{A: 1}", "''", "[[1, 2], [3]]", "0", "1e400", ".nan",
                   ".inf", "-.inf", "[x, y]", "{model: gas}", "[1.0e+400, 2]", "true", "1000000000", "-1000000000")


def yaml_value(text, rng):
    """A YAML key's value replaced by a value of another kind or an odd number."""
    keys = list(YAML_KEY.finditer(text))
    if not keys:
        return flip_byte(text, rng)
    key = rng.choice(keys)
    return text[:key.start(3)] + rng.choice(ODD_YAML_VALUES) + text[key.end(3):]


def yaml_key(text, rng):
    """A YAML key renamed to another key of the file (a field in the wrong place)."""
    keys = list(YAML_KEY.finditer(text))
    if not keys:
        return flip_byte(text, rng)
    key, other = rng.choice(keys), rng.choice(keys)
    return text[:key.start(2)] + other.group(2) + text[key.end(2):]


def yaml_indent(text, rng):
    """A line indented two spaces more or less (an entry moved to another level)."""
    lines = _lines(text)
    i = rng.randrange(len(lines))
    lines[i] = "  " + lines[i] if rng.random() < 0.5 or not lines[i].startswith("  ") else lines[i][2:]
    return "\n".join(lines)


MUTATIONS = (delete_line, duplicate_line, swap_lines, truncate, flip_byte, corrupt_number, corrupt_number,
             long_line, odd_whitespace)
KIND_MUTATIONS: dict[str, tuple] = {  # kind -> mutations of its own, added to MUTATIONS
    "yaml": (yaml_value, yaml_value, yaml_key, yaml_indent),
}


def mutate(text: str, kind: str, seed: int) -> tuple[str, str]:
    """A mutant of ``text`` and the names of the mutations applied (1-3 of them)."""
    rng = random.Random(seed)
    names = []
    for _ in range(rng.choice((1, 1, 1, 2, 3))):
        mutation = rng.choice(MUTATIONS + KIND_MUTATIONS.get(kind, ()))
        if text:
            text = mutation(text, rng)
        names.append(mutation.__name__)
    return text, "+".join(names)


# -- one mutant ----------------------------------------------------------------

@dataclass(frozen=True)
class Verdict:
    mechanism: str
    kind: str
    seed: int
    outcome: str
    mutations: str = ""
    detail: str = ""
    seconds: float = 0.0
    cpu_seconds: float = 0.0  # of the worker (on a busy machine, wall time says little)


class _TimeLimit(BaseException):
    """Raised by the alarm; a BaseException so no ``except Exception`` in singe swallows it."""


def _on_alarm(signum, frame):
    raise _TimeLimit()


def _worker_setup() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT_BYTES, MEMORY_LIMIT_BYTES))


def _mechanism(name: str) -> MechanismFiles:
    return next(m for m in MECHANISMS if m.name == name)


def write_mutant(mechanism: MechanismFiles, kind: str, seed: int, folder: pathlib.Path) -> tuple[pathlib.Path, str]:
    """Copy the mechanism's files into ``folder`` with the ``kind`` file mutated."""
    for file_kind, file_name in mechanism.files.items():
        data = (mechanism.folder / file_name).read_bytes()
        if file_kind == kind:
            text, names = mutate(data.decode("latin-1"), kind, seed)
            data = text.encode("latin-1", errors="replace") if seed % 7 else text.encode("utf-8")
        (folder / file_name).write_bytes(data)
    return folder / mechanism.main, names


def run_mutant(name: str, kind: str, seed: int) -> Verdict:
    """Load one mutant under the time limit and judge the outcome."""
    from singe.errors import SingeInputError

    mechanism = _mechanism(name)
    mechanism.prepare()
    start, cpu_start = time.perf_counter(), time.process_time()
    with tempfile.TemporaryDirectory(prefix="singe-fuzz-") as folder:
        chem, names = write_mutant(mechanism, kind, seed, pathlib.Path(folder))
        previous = {sig: signal.signal(sig, _on_alarm) for sig in (signal.SIGALRM, signal.SIGPROF)}
        signal.setitimer(signal.ITIMER_PROF, TIME_LIMIT_S)
        signal.alarm(WALL_LIMIT_S)
        try:
            outcome, detail = _judge(chem, mechanism, seed)
        except _TimeLimit:
            outcome, detail = "hang", f"over {TIME_LIMIT_S} s of CPU time or {WALL_LIMIT_S} s of wall time"
        except SingeInputError as error:
            outcome, detail = _judge_rejection(error, folder)
        except BaseException:  # noqa: BLE001 - every escape is the finding
            outcome, detail = "escape", traceback.format_exc(limit=-6)
        finally:
            signal.setitimer(signal.ITIMER_PROF, 0)
            signal.alarm(0)
            for sig, handler in previous.items():
                signal.signal(sig, handler)
    return Verdict(name, kind, seed, outcome, names, detail, time.perf_counter() - start,
                   time.process_time() - cpu_start)


def _judge_rejection(error, folder: str) -> tuple[str, str]:
    for problem in error.problems:
        location = problem.location
        if location is None or not location.file or location.line < 1:
            return "unlocated", str(problem)[:2000]
    return "rejected", str(error.problems[0])[:300]


def _judge(chem: pathlib.Path, mechanism: MechanismFiles, seed: int) -> tuple[str, str]:
    import singe

    mech = singe.load_mechanism(chem)
    bad = _reference_outputs_nonfinite(mech, seed)
    if bad:
        return "nonfinite", bad
    if random.Random(seed).random() < mechanism.compile_share:
        bad = _kernel_outputs_nonfinite(mech, seed)
        if bad:
            return "nonfinite", bad
    return "accepted", ""


def states(mech, seed: int, n: int = 8):
    """Temperatures across the thermo range, 0.1-100 atm, random mass fractions."""
    from singe.frontend.physics import temperature_range

    rng = np.random.default_rng(seed)
    T_low, T_high = temperature_range(mech)
    T = np.concatenate(([T_low, T_high], rng.uniform(T_low, T_high, n - 2)))
    P = 101325.0 * 10 ** rng.uniform(-1, 2, n)
    Y = rng.random((len(mech.transported_species), n)) ** 4
    Y /= Y.sum(axis=0)
    return T, P, Y


def _reference_outputs_nonfinite(mech, seed: int) -> str:
    from singe.reference import kinetics, transport

    T, P, Y = states(mech, seed)
    outputs = {"net production rates": lambda: kinetics.net_production_rates(mech, T, P, Y)}
    if mech.has_transport:
        outputs["viscosity"] = lambda: transport.viscosity(mech, T, P, Y)
        outputs["mixture diffusion"] = lambda: transport.mixture_diffusion(mech, T, P, Y)
    for what, evaluate in outputs.items():
        with np.errstate(all="ignore"):
            value = evaluate()
        if not np.isfinite(value).all():
            return f"reference {what} not finite at T={T.tolist()}"
    return ""


def _kernel_outputs_nonfinite(mech, seed: int) -> str:
    from singe.cli import default_kernels
    from singe.compiler import compile_kernel

    kernels = default_kernels(mech)
    kernel = kernels[seed % len(kernels)]
    compiled = compile_kernel(mech, kernel, warps=2 + seed % 3)
    T, P, Y = states(mech, seed, n=4)
    with np.errstate(all="ignore"):
        value = compiled.simulate(T, P, Y)
    if not np.isfinite(value).all():
        return f"simulated {kernel} kernel output not finite at T={T.tolist()}"
    return ""


def run_batch(specs: list[tuple[str, str, int]]) -> list[Verdict]:
    return [run_mutant(*spec) for spec in specs]


# -- a campaign ----------------------------------------------------------------

def specs(count: int, seed: int = 14) -> list[tuple[str, str, int]]:
    """``count`` mutants drawn over the available mechanisms (by weight) and their file kinds."""
    mechanisms = [m for m in MECHANISMS if m.available]
    rng = random.Random(seed)
    chosen = rng.choices(mechanisms, weights=[m.weight for m in mechanisms], k=count)
    return [(m.name, rng.choice(sorted(m.files)), seed * 1_000_003 + i) for i, m in enumerate(chosen)]


WORKER_START = "spawn"
"""How the pool starts its workers: a fresh interpreter each, whose address space is its own.  Forked, a worker
inherits the test session's, which once reached 3.6 GB (``singe.kernels.build_graph`` keeping a graph per
compilation), past its ``MEMORY_LIMIT_BYTES``: every allocation of its mutants then failed as an 'escape'."""


def _pool(workers: int) -> concurrent.futures.ProcessPoolExecutor:
    return concurrent.futures.ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context(WORKER_START),
                                                  initializer=_worker_setup)


def address_space() -> int:
    """This process's address space [B] (VmSize), what ``MEMORY_LIMIT_BYTES`` limits in a worker."""
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) * 1024 for line in status if line.startswith("VmSize:"))


def campaign(count: int, workers: int = 2, batch: int = 25, seed: int = 14) -> list[Verdict]:
    """Run ``count`` mutants on a pool of ``workers`` processes.  A worker
    that dies (a crash, the memory limit) breaks the pool: the mutants it took
    down with it run again one per process, and the one that dies again is an
    'escape'."""
    for mechanism in MECHANISMS:
        mechanism.prepare()
    todo = specs(count, seed)
    verdicts: list[Verdict] = []
    broken: list[tuple[str, str, int]] = []
    with _pool(workers) as pool:
        futures = {pool.submit(run_batch, todo[i:i + batch]): todo[i:i + batch] for i in range(0, len(todo), batch)}
        for future in concurrent.futures.as_completed(futures):
            try:
                verdicts.extend(future.result())
            except concurrent.futures.process.BrokenProcessPool:
                broken.extend(futures[future])
    verdicts.extend(_isolated(spec) for spec in broken)
    return verdicts


def _isolated(spec: tuple[str, str, int]) -> Verdict:
    """One mutant in a process of its own."""
    with _pool(1) as pool:
        try:
            return pool.submit(run_mutant, *spec).result()
        except concurrent.futures.process.BrokenProcessPool as error:
            return Verdict(*spec, "escape", "", f"the process died: {error!r}")


def summary(verdicts: list[Verdict]) -> str:
    counts: dict[str, int] = {}
    for verdict in verdicts:
        counts[verdict.outcome] = counts.get(verdict.outcome, 0) + 1
    lines = [", ".join(f"{n} {k}" for k, n in sorted(counts.items()))]
    for name in sorted({v.mechanism for v in verdicts}):
        times = [v.seconds for v in verdicts if v.mechanism == name]
        cpu = [v.cpu_seconds for v in verdicts if v.mechanism == name]
        lines.append(f"  {name}: {len(times)} mutants, {np.mean(times):.3f} s mean, {max(times):.2f} s max "
                     f"({np.mean(cpu):.3f} s CPU mean)")
    lines.append(f"  CPU time in the workers: {sum(v.cpu_seconds for v in verdicts):.1f} s")
    for verdict in verdicts:
        if verdict.outcome in FAILURES:
            lines.append(f"{verdict.outcome}: {verdict.mechanism} {verdict.kind} seed {verdict.seed} "
                         f"({verdict.mutations}): {verdict.detail}")
    return "\n".join(lines)


if __name__ == "__main__":
    import sys

    sys.path.insert(0, str(ROOT))

    start = time.perf_counter()
    result = campaign(int(sys.argv[1]) if len(sys.argv) > 1 else 200)
    print(summary(result))
    print(f"{len(result)} mutants in {time.perf_counter() - start:.1f} s")
