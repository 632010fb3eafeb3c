# isaforge demo: the shape of a Tensix matmul inner loop, written for isaforge.
# Both text forms users meet are accepted: objdump's and the LLK macros.
ttsetc16 5,4
TTI_SETC16(6, 0x8)
ttreplay 16,16,0,1
TTI_MVMUL(0, 0, 1, 0)
ttmvmul 0,0,2,0
ttsetrwc 0,0,0,0,0,15
