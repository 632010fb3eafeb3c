"""T-Language compilers for THEIA: the VP dialect (vector processor) and the CP dialect.

Both generate the code of the upstream compilers of freecores/theia_gpu beta_2.0 (and the same
listing text), and write the files of the reference driver ``theia_compile``::

    from isaforge import theia
    vp = theia.compile_vp(open("prog.vp").read(), filename="prog.vp")
    vp.words            # 64-bit VP instructions (code.mem)
    vp.listing          # code.list text
    vp.header()         # code_block_header.thh text (PROG_SIZE, PROG_OFFSET)
    cp = theia.compile_cp(open("prog.cp").read(), filename="prog.cp",
                          headers={"code_block_header.thh": vp.header()})
    cp.words, cp.listing, cp.mem   # control_code.mem / cp_code.list

``compile_program("prog.vp", out_dir)`` does what ``isaforge theia compile prog.vp`` does.

Compatibility: the upstream compilers' code generation has defects that their outputs (and so
the RTL regressions) depend on. We reproduce them, so that the outputs stay identical, and
list them here (details in the ``vp`` and ``cp`` modules):

* an expression in a condition or a call argument leaves its instruction count set, and the
  next assignment then patches the branch or call instead of emitting an instruction
  (test_expressions: ``R66 = 0xdead`` after ``if (a + b > c*a + 1)`` emits nothing);
* a returned expression is written to ``R[1 + offset]`` (the caller reads R1); ``return NAME;``
  loads the constant spelled by NAME's hex digits; ``return R7;`` and other registers work;
* nested loops share one "loop start" (the outer loop jumps back to the inner one's);
* ``scale(Rn)`` / ``unscale(Rn)`` read R0; ``x = arr[i];`` reads ``arr[0]``;
* a call's frame displacement counts variable names, not registers (arrays, temporaries);
* calls and definitions share one parameter counter: a plain call ``f(a);`` does not reset
  it (the next call's arguments go to later registers), and inside a function with
  parameters a call's arguments go after them; a constant other than 0, 1, 2 cannot be an
  argument;
* the CP reads any identifier containing ``R`` as a register, ``x++`` adds 0, ``x--`` fails,
  a scalar initialiser other than the last of its list is read as decimal from its hex
  digits, a binary literal's bits are read back as hex digits (0b101 is 0x101), and ``<=``
  in a condition leaves the block when it holds (refdata multicore_smoke depends on it);
* a VP condition on vectors tests the ALU's flags of ``left - right``: ZERO when all lanes
  are 0, SIGN when all three are negative; so ``<`` and ``==`` hold when they hold on every
  lane, but ``<=`` is ``<`` on every lane (an equal lane fails it), ``>=`` holds unless
  every lane is less, ``>`` unless every lane is less or every lane equal, ``!=`` when one
  lane differs (test_branches_1 depends on the encoding);
* an identifier cannot start with x, y or z (the scanner's longest match).

The preprocessors are upstream's, directive by directive (see the ``preprocess`` module: a VP
``#include`` is a comment, ``#ifdef``/``#else``/``#endif``/``#undef`` are comments in VP code
and dropped lines in CP code, each with a warning).

Deviations from upstream (where it fails or the manual asks for more): a CP ``#include``
also searches ``headers``, ``include_dirs`` and the including file's folder (upstream: the
current folder only); an unterminated ``//`` comment at the end of a file is accepted;
``\\r`` is a blank (upstream's scanners reject it); register numbers above R255, too many
variables, a VP branch to an instruction past 255 and a CP program past its 256-word memory
are errors (upstream cuts them to 8 bits); a sign in a
swizzle applies to the lane of the result it is written on (``a.-zx-y`` is
(-a.z, a.x, -a.y), as the manual means): the hardware negates source lanes before it
swizzles, so the compiler moves each sign to the lane it reads, and a lane read both negated
and not (the manual's ``Argument1.y-yy``) takes a second ADD (upstream keeps signs on their
positions, which computes something else; no regression has a sign in a swizzle).

Extensions (each from the manual; none occurs in the regressions, whose outputs they leave
unchanged): ``for``; ``-=``; one-lane sources (``v.x``); multi-lane write masks (``v.xy``);
fixed-point literals (``17fp2.5``) and negative literals (``-2``, also in ``(1,3,-2)``);
``-v`` (every lane negated); declarations initialised with one number (``vector i = 0;``) or
on some lanes (``vector MyNumber.x = 17fp2.5;``: an ADD of the immediate with that write
mask, the form of a lane of ``(x, y, z)``; upstream's grammar has neither); ``n``, ``x``,
``y``, ``z`` alone as names; ``scale(expr)`` (a MUL by 2**17 loaded first: the SMU's left
scale does nothing) and ``unscale(expr)`` (an ADD whose source 1 the SMU shifts right by 17),
where upstream takes only a register and reads R0 (kept for ``scale(Rn)``, warned); a thread
started before its definition; an empty statement ``;``; CP ``if``/``else``, ``!=``, ``<``,
``>``, ``>=``, ``~x`` (NOT) and chains of ``<<``/``>>``/``&`` with C's precedence; a constant
as a CP loop condition.

Unsupported: pointers (the manual's section 8 is "TBD"). A ``*`` or ``&`` where a variable
name, an operand or a statement starts is refused with
``file:line:col: error: expected an operand, found '*' (pointers are not supported: the
T-Language manual leaves them TBD, section 8; use an array and an index variable, v[i])``.
Also refused with a hint: a fraction without a fixed-point prefix (``2.5``), a register
declared as a variable (``vector R1;``), ``=`` in a condition, a block without braces, the
manual's typographic dash (U+2013) for minus.
Where the upstream-compatible code does not do what the source says, the result carries a
``file:line:col: warning: ...`` (the CLI prints them on stderr).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ..decode import decode_one
from ..image import CP_MEM_HEADER, HEADER_FILE, block_header, program_name, write_mem
from ..isa import vp_isa
from ..listing import vp_sections
from . import cp as _cp
from . import vp as _vp
from .errors import CompileError
from .preprocess import Preprocessed, preprocess
from .vpinstr import VpInstr

LISTING_HEADER = "//List file created by theia_compile"


@dataclass
class VpProgram:
    """A compiled VP program."""

    words: list[int]
    listing: str  # code.list
    symbols: dict[str, int] = field(default_factory=dict)  # function name -> address
    preprocessed: Preprocessed | None = None
    filename: str = "<input>"
    # "file:line:col: warning: ..." for code compiled as upstream does but that does not do
    # what the source says (see the module docstring)
    warnings: list[str] = field(default_factory=list)

    @property
    def size(self) -> int:
        """Number of instructions (the driver's CodeBlockSize)."""
        return len(self.words)

    @property
    def mem(self) -> str:
        """code.mem text: two hex32 words per instruction, high word first."""
        return write_mem(self.words)

    def header(self, name: str | None = None, offset: int = 0) -> str:
        """code_block_header.thh as the driver writes it for program ``name`` (default: the
        source file's name without extension, e.g. ``TEST1_IO_SIZE`` for test1_IO.vp)."""
        return block_header([(name or program_name(self.filename), self.size)], offset)


@dataclass
class CpProgram:
    """A compiled CP program."""

    words: list[int]
    listing: str  # cp_code.list
    mem: str  # control_code.mem
    preprocessed: Preprocessed | None = None
    warnings: list[str] = field(default_factory=list)


@functools.lru_cache(maxsize=4096)
def _vp_text(word: int) -> str:
    """The listing text of a VP word (the disassembler's, without its reassembly check)."""
    isa = vp_isa()
    form = isa.match(word)
    if form is None:  # never for the words we generate
        return decode_one(word).text
    return isa.format(form, form.field_values(word), None)


def _vp_assembly(ins: VpInstr) -> str:
    if ins.symbol is None:
        word = ins.word()
        return f"{vp_sections(word):<50}//\t{word:016X}\t{_vp_text(word)}"
    raw = f"{ins.op:x} @{ins.symbol} {ins.src1:x} {ins.src0:x}"
    text = _vp_text(ins.word(dest=ins.dst & ~0xFF)).replace("@0.", f"@{ins.symbol}.", 1)
    return f"{raw:<50}//\t{raw}\t{text}"


def _listing(lines: list[str], quoted: list[str], code: Sequence[VpInstr | _cp.CpInstr],
             symbols: Mapping[str, int], assembly: object) -> str:
    heads: dict[int, str] = {}
    for name in sorted(symbols):
        heads.setdefault(symbols[name], name)
    for i, ins in enumerate(code):
        if i in heads:
            lines += ["", "//" + heads[i]]
        if 0 < ins.line <= len(quoted):
            lines.append("//" + quoted[ins.line - 1])
        if ins.comment:
            lines.append("//" + ins.comment)
        lines.append(f"{i}:\t{assembly(ins)}")  # type: ignore[operator]
    return "".join(line + "\n" for line in lines)


def _warnings(found: Sequence[tuple[object, str]]) -> list[str]:
    return [f"{loc}: warning: {msg}" for loc, msg in found]


MAX_BRANCH_TARGET = 0xFF  # a branch's DST literal is 8 bits
CP_MEMORY_SIZE = 256  # the CP's instruction memory, addressed by an 8-bit IP


def _check_branch_targets(code: Sequence[VpInstr], symbols: Mapping[str, int],
                          pre: Preprocessed) -> None:
    """A branch to an instruction past 255 cannot be encoded (upstream cuts it to 8 bits)."""
    line = 1
    for i, ins in enumerate(code):
        if ins.line > 0:
            line = ins.line
        if not ins.op >> 9 & 1 or ins.op >> 15 & 1:  # not a branch, or through a register
            continue
        target = symbols.get(ins.symbol, 0) if ins.symbol else ins.target
        if target > MAX_BRANCH_TARGET:
            what = f"the call of '{ins.symbol}'" if ins.symbol else f"instruction {i}"
            raise CompileError(f"{what} branches to instruction {target}, past the 8-bit "
                               f"branch destination (at most {MAX_BRANCH_TARGET}); move "
                               "loops, ifs and functions into the first 256 instructions",
                               pre.linemap.loc(line))


def compile_vp(text: str, filename: str = "<input>",
               include_dirs: Sequence[str | Path] = (),
               headers: Mapping[str, str] | None = None) -> VpProgram:
    """Compile a VP T-Language program (raises CompileError with file:line:col).

    ``include_dirs`` and ``headers`` are not read: the VP preprocessor never includes a file
    (an ``#include`` line is a comment, with a warning), as upstream's."""
    pre = preprocess(text, filename, cp=False, include_dirs=include_dirs, headers=headers)
    compiler = _vp.compile_tokens(pre)
    code, symbols = compiler.code, compiler.symbols
    _check_branch_targets(code, symbols, pre)
    listing = _listing([LISTING_HEADER], pre.lines, code, symbols, _vp_assembly)
    words = []
    for ins in code:
        if ins.symbol is None:
            words.append(ins.word())
            continue
        if ins.symbol not in symbols:
            raise CompileError(f"function definition for '{ins.symbol}' not found",
                               ins.symbol_loc)  # type: ignore[arg-type]
        words.append(ins.word(dest=symbols[ins.symbol]))
    return VpProgram(words, listing, dict(symbols), pre, filename,
                     _warnings([*pre.warnings, *compiler.warnings]))


def compile_cp(text: str, filename: str = "<input>",
               include_dirs: Sequence[str | Path] = (),
               headers: Mapping[str, str] | None = None) -> CpProgram:
    """Compile a CP T-Language program (``#include`` searches ``headers``, then
    ``include_dirs``, the file's folder and the current folder)."""
    pre = preprocess(text, filename, cp=True, include_dirs=include_dirs, headers=headers)
    compiler = _cp.compile_tokens(pre)
    code = compiler.code
    if len(code) > CP_MEMORY_SIZE:
        raise CompileError(f"the CP program has {len(code)} instructions: the control "
                           f"processor's memory (and 8-bit IP) holds {CP_MEMORY_SIZE}",
                           pre.linemap.loc(max((ins.line for ins in code), default=1)))
    listing = _listing([LISTING_HEADER], pre.lines, code, {}, lambda ins: ins.text())
    mem = "".join(line + "\n" for line in [CP_MEM_HEADER, *(ins.text() for ins in code)])
    return CpProgram([ins.word() for ins in code], listing, mem, pre,
                     _warnings([*pre.warnings, *compiler.warnings]))


@dataclass
class Outputs:
    """What ``compile_program`` wrote (paths; none for ``compile_files``) and compiled."""

    files: list[Path]
    vp: VpProgram | None = None
    cp: CpProgram | None = None
    warnings: list[str] = field(default_factory=list)


def _read(path: Path) -> str:
    try:
        return path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as e:
        raise CompileError(f"{path}: not a text file ({e.reason})") from None


def _compile_pair(src: Path, include_dirs: Sequence[str | Path],
                  cp_include_dirs: Sequence[str | Path]) -> Outputs:
    result = Outputs([])
    headers: dict[str, str] = {}
    if src.suffix != ".cp":
        vp = compile_vp(_read(src), str(src), include_dirs)
        cp_path = src.with_suffix(".cp")
        if not cp_path.is_file():
            raise CompileError(f"file not found: {cp_path} (compiling {src.name} also "
                               f"compiles the CP program {cp_path.name} beside it)")
        headers[HEADER_FILE] = vp.header()
        result.vp = vp
        result.warnings += vp.warnings
        src = cp_path
    cp = compile_cp(_read(src), str(src), cp_include_dirs, headers)
    result.cp = cp
    result.warnings += cp.warnings
    return result


def compile_files(source: str | Path, include_dirs: Sequence[str | Path] = ()) -> Outputs:
    """``X.vp`` and the ``X.cp`` beside it (or ``X.cp`` alone), compiled in memory as
    :func:`compile_program` compiles them, without writing anything (``files`` is empty)."""
    return _compile_pair(Path(source), include_dirs, include_dirs)


def compile_program(source: str | Path, out_dir: str | Path = ".",
                    include_dirs: Sequence[str | Path] = ()) -> Outputs:
    """The reference driver: ``X.vp`` -> code.mem, code.list, code_block_header.thh, then
    ``X.cp`` beside it -> control_code.mem, cp_code.list; ``X.cp`` alone -> the CP files."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    result = _compile_pair(Path(source), include_dirs, [out, *include_dirs])
    files: list[tuple[str, str]] = []
    if result.vp is not None:
        files += [("code.list", result.vp.listing), ("code.mem", result.vp.mem),
                  (HEADER_FILE, result.vp.header())]
    assert result.cp is not None
    files += [("cp_code.list", result.cp.listing), ("control_code.mem", result.cp.mem)]
    for name, data in files:
        (out / name).write_text(data)
        result.files.append(out / name)
    return result


def compile_programs(sources: Sequence[str | Path], out_dir: str | Path = ".",
                     include_dirs: Sequence[str | Path] = ()) -> Outputs:
    """``theia_compile A.vp B.vp ...``: each program in turn (code.list/code.mem and the CP
    files are those of the last one), the header gains ``NAME_SIZE``/``NAME_OFFSET`` for each
    (offsets add up, and each CP program sees the programs up to its own), and
    instructions.mem holds every code.mem one after the other."""
    if len(sources) == 1:
        return compile_program(sources[0], out_dir, include_dirs)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = [Path(s) for s in sources]
    for p in paths:
        if p.suffix == ".cp":
            raise CompileError(f"{p}: give .vp programs (each compiles the .cp beside it)")
    programs: list[tuple[str, int]] = []
    image = "\n"  # the driver starts instructions.mem with an empty line
    result = Outputs([])
    for src in paths:
        vp = compile_vp(_read(src), str(src), include_dirs)
        cp_path = src.with_suffix(".cp")
        if not cp_path.is_file():
            raise CompileError(f"file not found: {cp_path} (compiling {src.name} also "
                               f"compiles the CP program {cp_path.name} beside it)")
        programs.append((program_name(src.name), vp.size))
        header = block_header(programs)
        image += vp.mem
        cp = compile_cp(_read(cp_path), str(cp_path), [out, *include_dirs],
                        {HEADER_FILE: header})
        for name, data in (("code.list", vp.listing), ("code.mem", vp.mem),
                           (HEADER_FILE, header), ("cp_code.list", cp.listing),
                           ("control_code.mem", cp.mem), ("instructions.mem", image)):
            (out / name).write_text(data)
            if out / name not in result.files:
                result.files.append(out / name)
        result.vp, result.cp = vp, cp
        result.warnings += vp.warnings + cp.warnings
    return result


__all__ = [
    "HEADER_FILE",
    "CompileError",
    "CpProgram",
    "Outputs",
    "VpProgram",
    "block_header",
    "compile_cp",
    "compile_files",
    "compile_program",
    "compile_programs",
    "compile_vp",
    "preprocess",
    "program_name",
]
