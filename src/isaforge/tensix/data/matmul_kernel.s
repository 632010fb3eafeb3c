# The peak matmul kernel of spec 000 §4 (tt-llk's matmul, math thread), HiFi4:
# five AddrMod sections set with SETC16, the 16 MVMULs recorded with REPLAY 16,16,0,1 and
# replayed by a MOP (template 1: outer 1, inner 4 = one replay per fidelity phase),
# SETRWC at the boundaries. Load SrcA/SrcB bank 0 with 64x16 values (four 16x16 faces) first:
#   isaforge tensix run matmul_kernel.s --load srca:0:bf16=A.npy --load srcb:0:bf16=B.npy \
#       --dump dst:fp32=C.npy --trace rwc
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
