"""The expression grammar both T-Language dialects share: binary operators by precedence,
and comparisons.

An expression is levels of left-associative binary operators over the dialect's ``factor``,
loosest level first (``LEVELS``); each operator is handed to the dialect's ``binary``, which
generates its instruction as it is parsed (the upstream compilers emit code from their
grammar actions, so the order of the calls is the order of the code)::

    VP:  expression = term (("+" | "-" | "|") term)*     term = factor (("*" | "/" | "&") factor)*
    CP:  expression = term (("+" | "|" | "-") term)*     term = shift ("&" shift)*
         shift = factor (("<<" | ">>") factor)*

A comparison is ``expression OP expression`` with OP one of the dialect's comparisons.
"""

from __future__ import annotations

from collections.abc import Container
from typing import ClassVar, Generic, TypeVar

from .cursor import TokenCursor
from .lexer import Token

V = TypeVar("V")

COMPARISONS = "==, !=, <, >, <=, >="


class ExpressionGrammar(TokenCursor, Generic[V]):
    """Binary expressions and comparisons over a dialect's ``factor`` and ``binary``."""

    #: operator token kinds by precedence level, loosest first
    LEVELS: ClassVar[tuple[tuple[str, ...], ...]] = ()

    def expression(self) -> V:
        return self.binary_level(0)

    def binary_level(self, level: int) -> V:
        """An expression of the operators of ``LEVELS[level:]``."""
        if level == len(self.LEVELS):
            return self.factor()
        left = self.binary_level(level + 1)
        ops = self.LEVELS[level]
        while self.at(*ops):
            op = self.next()
            right = self.binary_level(level + 1)
            left = self.binary(op, left, right)
        return left

    def factor(self) -> V:
        raise NotImplementedError  # each dialect parses its own operands

    def binary(self, op: Token, left: V, right: V) -> V:
        raise NotImplementedError  # and generates its own code for an operator

    def comparison(self, allowed: Container[str]) -> tuple[V, Token, V]:
        """``left OP right`` with OP in ``allowed``."""
        left = self.expression()
        op = self.peek()
        if op.kind not in allowed:
            hint = " ('=' assigns; compare with '==')" if op.kind == "=" else ""
            raise self.error(f"expected a comparison ({COMPARISONS}){hint}", op)
        self.next()
        return left, op, self.comparison_right(op)

    def comparison_right(self, op: Token) -> V:
        """The right side of a comparison (a dialect may warn about ``op`` first)."""
        return self.expression()


__all__ = ["ExpressionGrammar"]
