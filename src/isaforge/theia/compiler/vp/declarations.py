"""VP declarations: ``vector`` lists (right-recursive, as upstream: the last name gets the
first register), functions (parameters) and threads, and the thread starts they resolve."""

from __future__ import annotations

from ..lexer import Token
from ..literals import dec_value, hex_value
from ..vpinstr import (
    ADD,
    CONTROL_REG0,
    WE_X,
    WE_XYZ,
    WE_Y,
    WE_Z,
    VpInstr,
)
from .base import (
    AUTOVAR_START,
    NUMBERS,
    PARAM_LIMIT,
    PARAM_START,
    VpBase,
)


class VpDeclarations(VpBase):
    """Declarations of variables, functions and threads."""

    def declaration(self) -> None:
        self.next()
        items = []
        while True:
            name = self.declared_name()
            if self.at("."):
                # the manual's ``vector v.x = 17fp2.5;``: only the named lanes are set
                we = self.write_mask(name, allow_n=False)
                self.expect("=", "'=' (a declaration with lanes, e.g. v.x, initialises them)")
                items.append((name, None, (we, self.constant())))
            elif self.at("="):
                self.next()
                if self.at(*NUMBERS):  # ``vector i = 0;``: every lane
                    items.append((name, None, (WE_XYZ, self.constant())))
                else:
                    self.expect("(", "'(' or a number (a vector is initialised with "
                                     "(x, y, z) or one number)")
                    values = [self.constant()]
                    for _ in range(2):
                        self.expect(",", "','")
                        values.append(self.constant())
                    self.expect(")", "')'")
                    items.append((name, None, values))
            else:
                size = None
                if self.at("["):
                    self.next()
                    size = self.constant()
                    self.expect("]", "']'")
                items.append((name, size, None))
            if not self.at(","):
                break
            self.next()
        end = self.expect(";", "';'")
        seen = set(self.autovars)
        for name, _, _ in items:
            if name.text in seen:
                raise self.error(f"duplicated symbol '{name.text}'", name)
            seen.add(name.text)
        # the list is right-recursive: the last name is allocated (and initialised) first
        for i in range(len(items) - 1, -1, -1):
            name, size, values = items[i]
            last = i == len(items) - 1
            if values is None:
                text = size or "1"
                n = hex_value(text) if last else dec_value(text)
                self.autovars[name.text] = self.alloc(n, name)
                continue
            reg = self.autovars[name.text] = self.alloc(1, name)
            if isinstance(values, tuple):  # an extension: one immediate, some or all lanes
                mask, value = values
                ins = VpInstr(line=end.line)
                ins.set_dest(reg)
                ins.set_we(mask)
                ins.set_imm(hex_value(value))
                ins.addressing(True, False, True)
                ins.set_code(ADD)
                self.emit(ins)
                continue
            for lane, we in enumerate((WE_X, WE_Y, WE_Z)):
                ins = VpInstr()
                ins.set_dest(reg)
                ins.set_we(we)
                ins.set_imm(hex_value(values[lane]))
                ins.addressing(True, False, True)
                ins.set_code(ADD)
                if lane == 0:
                    ins.line = end.line
                self.emit(ins)

    def declared_name(self) -> Token:
        tok = self.peek()
        if tok.kind == "REG":
            raise self.error(f"'{tok.text}' is a register (r0..r255 and R0..R255 are reserved "
                             "words): use it without a declaration, or choose another name",
                             tok)
        if tok.kind in ("*", "&"):
            raise self.pointer_error(tok, "a variable name")
        return self.expect("ID", "a variable name")

    def function(self) -> None:
        self.next()
        name = self.expect("ID", "a function name")
        self.expect("(", "'('")
        names: list[Token] = []
        if not self.at(")"):
            names.append(self.expect("ID", "a parameter name"))
            while self.at(","):
                self.next()
                names.append(self.expect("ID", "a parameter name"))
        self.expect(")", "')'")
        for p in reversed(names):  # right-recursive: the last parameter is R4
            if self.param_index + 1 > PARAM_LIMIT:
                raise self.error(f"cannot allocate more parameters: '{p.text}' "
                                 f"(at most {PARAM_LIMIT - PARAM_START} per function)", p)
            if p.text in self.params:
                raise self.error(f"parameter '{p.text}' is already defined", p)
            self.params[p.text] = self.param_index
            self.param_index += 1
        self.symbols[name.text] = len(self.code)
        self.block()
        self.autovars.clear()
        self.autovar_index = AUTOVAR_START
        self.params.clear()
        self.param_index = PARAM_START
        self.restore_frame()

    def thread(self) -> None:
        self.next()
        name = self.expect("ID", "a thread name")
        self.expect("(", "'('")
        self.expect(")", "')' (threads take no arguments)")
        self.threads[name.text] = len(self.code)
        self.thread_scope = True
        self.block()
        self.thread_scope = False
        self.autovars.clear()
        self.autovar_index = AUTOVAR_START
        ins = VpInstr(comment="Disable multi-threading")
        ins.set_code(ADD)
        ins.set_dest(CONTROL_REG0)
        ins.set_imm(0)
        ins.dest_zero(True)
        ins.set_we(WE_Z)
        self.emit(ins)

    def thread_offset(self, at: int, offset: int) -> None:
        first, second = self.code[at], self.code[at + 1]
        first.set_imm(offset << 1)
        second.set_imm(offset << 1 | 1)
        first.comment = f"Set thread instruction offset to 8'd{offset}"
        second.comment = "Enable multi-threading"

    def resolve_thread_starts(self) -> None:
        for at, name in self.thread_starts:
            if name.text not in self.threads:
                raise self.error(f"undefined thread '{name.text}'", name)
            self.thread_offset(at, self.threads[name.text])
