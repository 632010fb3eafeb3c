"""Speed of the T-Language compilers: compiled instructions per second.

A generated VP program: four functions with declarations (triples, one-number and one-lane
initialisers), if/else, while and for loops (they fit the first 256 instructions, as every
branch target must), then ``--blocks`` (default 400) blocks of straight-line code with
expressions (swizzles, signs, scale and unscale), a macro, I/O and a call each; and a generated
CP program of copy/wait/start blocks as large as the CP's 256-word memory allows, compiled
``--blocks / 9`` times. The figures
are the best of three compilations of the whole text (preprocessing, parsing, code generation,
the code.list listing and the image).

Usage: python benchmarks/theia_compile.py [--blocks N]
"""

from __future__ import annotations

import argparse
import time

from isaforge.theia.compiler import compile_cp, compile_vp

CP_BLOCKS = 9  # about 240 CP instructions: the CP's memory holds 256
FUNCTIONS = 4  # loops, ifs and calls must stay in the first 256 instructions (8-bit targets)


def vp_source(blocks: int) -> str:
    parts = ["#define Result R66\n#macro C = Dot( A, B )\n R7 = A * B;\n"
             " C = R7.xxx + R7.yyy;\n#endmacro\n"]
    for i in range(FUNCTIONS):
        parts.append(f"""
function F{i}( p, q )
{{
  vector u = (1, 2, 0x{i:x}), w.xz = 17fp1.5, k = 0, t, m;
  t = p.zxy * q.-x-yz + u;
  m = scale( unscale( t ) * unscale( u ) );
  if (t.xxx < 0x{i + 100:x}) {{
    t = t + u * (p - q);
  }} else {{
    t.y = m.x - u.z;
  }}
  while (k.x < 4) {{
    k++;
    w = w + k;
  }}
  for (k.x = 0; k.x < 3; k.x++) {{
    t = Dot( t, w );
  }}
  out[ u ] = t;
  return t / (w | u);
}}
""")
    parts.append("vector a = (1,2,3), b = (4,5,6), c.y = 7, d = 0;\n")
    for i in range(blocks):
        parts.append(f"""b = a.zxy * c.-x-yz + d * (a - b);
c = scale( unscale( b ) * unscale( a ) );
d.y = b.x - c.z;
out[ a ] = d;
Result = F{i % FUNCTIONS}( a, b );
a += 0x{i:x};
b = in[ a ];
R70 = Dot( a, b );
""")
    parts.append("exit;\n")
    return "".join(parts)


def cp_source(blocks: int) -> str:
    lines = ['#define VP_DST_CODE_MEM (1<<31)\n',
             "scalar SrcOffset = 0, DstOffset, Core, Size = 0x20, One = 1;\n"]
    for i in range(blocks):
        lines.append(f"""Core = {i % 4};
DstOffset = (0x0 | (Size << 20) | VP_DST_CODE_MEM );
copy_data_block < Core , DstOffset , SrcOffset >;
SrcOffset = SrcOffset + Size;
while ( block_transfer_in_progress ) {{}}
if (Core == One) {{ start <1>; }} else {{ start <{i % 4}>; }}
""")
    lines.append("exit;\n")
    return "".join(lines)


def best_of(n: int, fn: object) -> float:
    best = float("inf")
    for _ in range(n):
        t0 = time.perf_counter()
        fn()  # type: ignore[operator]
        best = min(best, time.perf_counter() - t0)
    return best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--blocks", type=int, default=400)
    args = ap.parse_args()
    vp_text, cp_text = vp_source(args.blocks), cp_source(CP_BLOCKS)
    vp = compile_vp(vp_text, filename="bench.vp")
    cp = compile_cp(cp_text, filename="bench.cp")
    t_vp = best_of(3, lambda: compile_vp(vp_text, filename="bench.vp"))
    cp_runs = max(1, args.blocks // CP_BLOCKS)

    def many_cp() -> None:
        for _ in range(cp_runs):
            compile_cp(cp_text, filename="bench.cp")

    t_cp = best_of(3, many_cp)
    for name, text, count, runs, secs in (("VP", vp_text, len(vp.words), 1, t_vp),
                                          ("CP", cp_text, len(cp.words), cp_runs, t_cp)):
        lines = text.count("\n")
        what = f"{lines} source lines -> {count} instructions"
        if runs > 1:
            what = f"{runs} x ({what}, the CP memory holds 256)"
        print(f"{name}: {what} in {secs * 1e3:.1f} ms: {count * runs / secs:,.0f} "
              f"instructions/s, {lines * runs / secs:,.0f} lines/s")


if __name__ == "__main__":
    main()
