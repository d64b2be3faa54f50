"""Soak: the corpus lifecycle under random edits, moves, missing roots, kills and concurrent ingests.

    python bench/soak.py [--rounds 20] [--files 40] [--seed 16] [--keep DIR]

Generates a corpus of `--files` documents (Markdown and text) over two roots, ingests it with
real `indx` processes into a fresh data directory configured as the README says
(`deploy/dagster.yaml`, so a killed ingest could leave its `embedder` slot held), then runs
rounds. Each round changes the files at random (edits, deletes, restores of deleted files,
renames, moves between the roots), may take a root away for one `indx ingest` and bring it back,
and injects faults: `kill -9` of an ingest at a random moment, and two `indx ingest` started at
once (the second sometimes with `--wait`). Then one `indx ingest` settles the round and the data
directory is checked against the files (DESIGN §7, "once and only once"):

- the LanceDB table equals what `indx chunk` gives for exactly the files present: row ids are
  distinct and each source's ids are those of its file (`indx_assets.app.table_check`);
- `indx status` shows no partition missing or stale;
- while a root was away, `indx ingest` exited 1 and kept its documents;
- every `indx` exit code was one the README promises (0; 75 for a refused concurrent ingest).

Prints the rounds, the faults injected and every discrepancy; exits 1 if there was any.
"""

import argparse
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_ingest import document  # noqa: E402  (the same generated Markdown)

from indx_assets.app.table_check import expected_chunk_ids, table_chunk_ids, table_discrepancies  # noqa: E402
from indx_assets.wiring.settings import Settings  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
INDX = str(Path(sys.executable).parent / "indx")
#: How long an `indx` command may take before the soak calls it stuck.
COMMAND_TIMEOUT_S = 600
#: Discrepancies printed in full (all are counted by kind).
SHOWN = 40


class Soak:
    def __init__(self, base: Path, files: int, rng: random.Random):
        self.rng = rng
        self.home = base / "indx"
        self.roots = [base / "alpha", base / "beta"]
        self.trash = base / "removed"  # deleted files wait here to be restored
        self.faults: Counter[str] = Counter()
        self.discrepancies: list[str] = []
        self.round = 0
        self.trash.mkdir(parents=True)
        for i in range(files):
            root = self.roots[i % 2]
            folder = root / ("notes" if i % 3 else "guides")
            folder.mkdir(parents=True, exist_ok=True)
            if i % 4 == 3:
                (folder / f"note-{i:02d}.txt").write_text(self._prose(i))
            else:
                (folder / f"report-{i:02d}.md").write_text(document(i, self.rng))
        (self.home / "dagster").mkdir(parents=True)
        shutil.copy(ROOT / "deploy" / "dagster.yaml", self.home / "dagster" / "dagster.yaml")

    def _prose(self, i: int) -> str:
        words = "tide reef lantern keeper granite survey beam channel harbour flash".split()
        return "\n\n".join(" ".join(self.rng.choices(words, k=30)).capitalize() + "." for _ in range(3 + i % 4)) + "\n"

    # -- the files -------------------------------------------------------------------------

    def present(self) -> list[Path]:
        return sorted(p for root in self.roots if root.is_dir() for p in root.rglob("*") if p.is_file())

    def _free(self, path: Path) -> Path:
        while path.exists():
            path = path.with_name(f"{path.stem}-{self.rng.randint(0, 999)}{path.suffix}")
        path.parent.mkdir(parents=True, exist_ok=True)
        return path

    def mutate(self) -> None:
        files = self.present()
        kinds = ["edit", "delete", "restore", "rename", "move"]
        for kind in self.rng.choices(kinds, k=self.rng.randint(1, 4)):
            if kind == "restore":
                removed = sorted(self.trash.iterdir())
                if not removed:
                    continue
                victim = self.rng.choice(removed)
                # the name it had, under the root it came from: "alpha--notes--x.md"
                root_name, *parts = victim.name.split("--")
                target = self._free(self.home.parent / root_name / Path(*parts))
                victim.rename(target)
            elif not files:
                continue
            else:
                path = self.rng.choice(files)
                files.remove(path)
                root = next(r for r in self.roots if path.is_relative_to(r))
                if kind == "edit":
                    with path.open("a") as f:
                        f.write(f"\n\nEdited in round {self.round}: the keeper logged a {self.rng.choice(['gale', 'calm', 'fog'])}.\n")
                elif kind == "delete":
                    path.rename(self.trash / "--".join((root.name, *path.relative_to(root).parts)))
                elif kind == "rename":
                    path.rename(self._free(path.with_name(f"renamed-{self.round}-{path.name}")))
                else:  # move to the same relative place under the other root
                    other = self.roots[1 - self.roots.index(root)]
                    path.rename(self._free(other / path.relative_to(root)))
            self.faults[kind] += 1

    # -- indx ------------------------------------------------------------------------------

    def env(self) -> dict[str, str]:
        return {"INDX_HOME": str(self.home), "PATH": str(Path(sys.executable).parent), "HOME": str(self.home)}

    def indx(self, *args: str) -> subprocess.Popen:
        return subprocess.Popen([INDX, *args], env=self.env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def finish(self, proc: subprocess.Popen, what: str) -> tuple[int, str, str]:
        try:
            out, err = proc.communicate(timeout=COMMAND_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            proc.kill()
            out, err = proc.communicate()
            self.note(f"{what}: still running after {COMMAND_TIMEOUT_S} s (stuck), killed")
        return proc.returncode, out, err

    def note(self, problem: str) -> None:
        self.discrepancies.append(f"round {self.round}: {' '.join(problem.split())}")

    def ingest(self, *args: str, expect: tuple[int, ...] = (0,), what: str = "indx ingest") -> int:
        code, _, err = self.finish(self.indx("ingest", *args), what)
        if code not in expect:
            self.note(f"{what} exited {code}, expected {expect}: {err.strip()[-400:]}")
        return code

    def kill_an_ingest(self) -> None:
        proc = self.indx("ingest")
        time.sleep(self.rng.uniform(0.5, 15.0))
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGKILL)
            self.faults["kill -9"] += 1
        proc.communicate()

    def concurrent_pair(self) -> None:
        waiting = self.rng.random() < 0.5
        procs = [self.indx("ingest", *(["--wait", str(COMMAND_TIMEOUT_S)] if waiting else [])) for _ in range(2)]
        results = [self.finish(p, "concurrent indx ingest") for p in procs]
        codes = sorted(code for code, _, _ in results)
        self.faults["concurrent pair" + (" (--wait)" if waiting else "")] += 1
        if codes != ([0, 0] if waiting else [0, 75]):
            self.note(f"concurrent pair{' with --wait' if waiting else ''} exited {codes}: "
                      + " | ".join(err.strip()[-300:] for code, _, err in results if code not in (0, 75)))

    def root_away(self) -> None:
        """A root goes missing for one ingest: it must report it (exit 1) and keep its rows."""
        root = self.rng.choice(self.roots)
        held_before, _ = table_chunk_ids(self.settings())
        present = expected_chunk_ids(self.settings())  # the sources whose file is still there
        away = root.with_name(root.name + ".away")
        root.rename(away)
        self.faults["root missing"] += 1
        try:
            self.ingest(expect=(1,), what=f"indx ingest with {root.name} missing")
            held, _ = table_chunk_ids(self.settings())
            # A source whose file this round deleted or moved away may go; one whose file is
            # still there (under the missing root, or anywhere) must keep its rows.
            lost = sum(len(ids) for source, ids in held_before.items() if source in present and source not in held)
            if lost:
                self.note(f"with {root.name} missing, {lost} rows of files still there were deleted")
        finally:
            away.rename(root)

    def settings(self) -> Settings:
        os.environ["INDX_HOME"] = str(self.home)
        os.environ.pop("INDX_CORPUS", None)
        return Settings.from_env()

    def check(self) -> None:
        for problem in table_discrepancies(self.settings()):
            self.note(problem)
        code, out, err = self.finish(self.indx("status", "--json"), "indx status")
        if code != 0:
            self.note(f"indx status exited {code}: {err.strip()[-400:]}")
            return
        for asset, counts in json.loads(out)["assets"].items():
            if counts["missing"] or counts["stale"]:
                self.note(f"indx status: {asset} has {counts['missing']} missing, {counts['stale']} stale")

    def run_round(self) -> None:
        self.round += 1
        self.mutate()
        if self.rng.random() < 0.25:
            self.root_away()
        if self.rng.random() < 0.4:
            self.kill_an_ingest()
        if self.rng.random() < 0.4:
            self.concurrent_pair()
        self.ingest(what="settling indx ingest")
        self.check()


def _kind(problem: str) -> str:
    """A discrepancy without its round, source, numbers and quoted output: what went wrong."""
    what = problem.split(": ", 1)[1]
    what = what.split(": ", 1)[1] if re.match(r"[^ ]+\.\w+: ", what) else what  # a source's line
    return re.sub(r"\d+", "N", what.split(": ")[0])[:90]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--files", type=int, default=40)
    parser.add_argument("--seed", type=int, default=16)
    parser.add_argument("--keep", type=Path, help="Work in this (new) folder and keep it, to look at afterwards.")
    args = parser.parse_args()
    base = args.keep or Path(tempfile.mkdtemp(prefix="indx-soak-"))
    soak = Soak(base, args.files, random.Random(args.seed))
    started = time.perf_counter()
    try:
        soak.ingest(*map(str, soak.roots), what="first indx ingest")
        soak.check()
        for _ in range(args.rounds):
            soak.run_round()
            print(f"round {soak.round}: {len(soak.present())} files, {len(soak.discrepancies)} discrepancies so far "
                  f"({time.perf_counter() - started:.0f} s)", flush=True)
    finally:
        if args.keep is None:
            shutil.rmtree(base, ignore_errors=True)
    print(f"rounds: {soak.round}")
    print(f"faults injected: {sum(soak.faults.values())} ({', '.join(f'{k} {v}' for k, v in sorted(soak.faults.items()))})")
    bad_rounds = len({problem.split(":")[0] for problem in soak.discrepancies})
    print(f"discrepancies: {len(soak.discrepancies)} (in {bad_rounds} of {soak.round + 1} checks)")
    for kind, n in Counter(map(_kind, soak.discrepancies)).most_common():
        print(f"  {n:5d}  {kind}")
    for problem in soak.discrepancies[:SHOWN]:
        print(f"  {problem[:300]}")
    if len(soak.discrepancies) > SHOWN:
        print(f"  ... and {len(soak.discrepancies) - SHOWN} more")
    sys.exit(1 if soak.discrepancies else 0)


if __name__ == "__main__":
    main()
