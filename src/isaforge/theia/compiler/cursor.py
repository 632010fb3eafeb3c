"""The token cursor both T-Language code generators (VP and CP) parse with."""

from __future__ import annotations

from ...core.errors import SourceLoc
from .errors import CompileError, LineMap
from .lexer import VALUE_KINDS, Token, tokenize
from .preprocess import Preprocessed


class TokenCursor:
    """Walks the tokens of a preprocessed program; errors and warnings carry file:line:col.

    ``last_value`` is the text of the last token consumed that carried a value: the upstream
    compilers read it back when they generate code, so the generators do too."""

    def __init__(self, pre: Preprocessed, cp: bool) -> None:
        self.pre = pre
        self.linemap: LineMap = pre.linemap
        self.toks = tokenize(pre.text, pre.linemap, cp=cp)
        self.pos = 0
        self.last_value = ""
        self.warnings: list[tuple[SourceLoc, str]] = []
        self.depth = 0  # nesting of blocks

    def peek(self, k: int = 0) -> Token:
        return self.toks[min(self.pos + k, len(self.toks) - 1)]

    def next(self) -> Token:
        tok = self.toks[self.pos]
        if self.pos < len(self.toks) - 1:
            self.pos += 1
        if tok.kind in VALUE_KINDS:
            self.last_value = tok.text
        return tok

    def at(self, *kinds: str) -> bool:
        return self.peek().kind in kinds

    def loc(self, tok: Token) -> SourceLoc:
        return self.linemap.loc(tok.line, tok.col)

    def warn(self, tok: Token, msg: str) -> None:
        """Note code that upstream generates (and so do we) but that does not do what the
        program says."""
        self.warnings.append((self.loc(tok), msg))

    def error(self, msg: str, tok: Token | None = None) -> CompileError:
        return CompileError(msg, self.loc(tok or self.peek()))

    def unexpected(self, what: str, tok: Token | None = None) -> CompileError:
        """``expected WHAT, found 'TEXT'`` (or ``found end of file``) at ``tok``."""
        tok = tok or self.peek()
        found = "end of file" if tok.kind == "EOF" else f"'{tok.text}'"
        return self.error(f"expected {what}, found {found}", tok)

    def expect(self, kind: str, what: str | None = None) -> Token:
        if self.peek().kind != kind:
            raise self.unexpected(what or repr(kind))
        return self.next()

    def statement(self) -> None:
        raise NotImplementedError  # each dialect parses its own statements

    #: what a missing opening brace of a block is reported as
    BRACE = "'{'"

    def block(self) -> None:
        """``{ statement* }``."""
        self.expect("{", self.BRACE)
        self.depth += 1
        if self.depth > 200:
            raise self.error("blocks nested too deeply")
        while not self.at("}"):
            if self.at("EOF"):
                raise self.unexpected("'}'")
            self.statement()
        self.next()
        self.depth -= 1
