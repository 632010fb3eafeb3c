# examples/batch: src/isaforge/tensix/data/matmul_kernel.s at HiFi4: the MOP's inner loop
# (.mopcfg 1) replays the 16 MVMULs once per fidelity phase, 4 phase(s) here.
.config ALU_ACC_CTRL_Fp32_enabled 1
.thread 1
.mopcfg 0 0x1
.mopcfg 1 0x4
.mopcfg 2 0x2000000
.mopcfg 3 0x2000000
.mopcfg 4 0x2000000
.mopcfg 5 0x4040100
.mopcfg 6 0x2000000
.mopcfg 7 0x4040100
.mopcfg 8 0x4040100

ttsetc16 12,0x800
ttsetc16 28,0x8
ttsetc16 13,0x4010
ttsetc16 29,0x8
ttsetc16 14,0x6040
ttsetc16 30,0x8
ttsetc16 16,0x7060
ttsetc16 32,0x400
ttsetc16 17,0x8080
ttsetc16 33,0x2800
ttreplay 16,16,0,1
ttmvmul 0,0,0,0
ttmvmul 0,0,1,0
ttmvmul 0,0,0,0
ttmvmul 0,0,2,0
ttmvmul 0,0,0,0
ttmvmul 0,0,1,0
ttmvmul 0,0,0,0
ttmvmul 0,0,4,0
ttmvmul 0,0,0,0
ttmvmul 0,0,1,0
ttmvmul 0,0,0,0
ttmvmul 0,0,2,0
ttmvmul 0,0,0,0
ttmvmul 0,0,1,0
ttmvmul 0,0,0,0
ttmvmul 0,0,5,0
ttsetrwc 0,0,0,0,0,15
ttmop 1,0,0
ttsetrwc 0,0,0,0,0,15
