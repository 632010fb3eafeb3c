# A whole tile on the coprocessor, no RISC-V code: the unpackers bring two 32x32 BF16 tiles
# from L1, the Matrix Unit multiplies them (HiFi4, FP32 Dst), the SFPU takes the product's
# absolute value and converts it to BF16 in Dst (SFPLOAD FP32, SFPABS, SFPSTORE BF16: a
# typecast, truncating), the packer writes the BF16 tile back to L1. Tiles are in tt-metal's tile order (four 16x16 faces, row-major each;
# isaforge.tensix.machine.l1formats.tilize):
#
#   isaforge tensix run matmul_l1.s --load l1:0x10000:bf16=A.npy --load l1:0x20000:bf16=B.npy \
#       --dump l1:0x30000:bf16:1024=C.npy
#
# gives C = |A @ B| (each file holds 1024 values in tile order). Thread 0 unpacks (unpacker 1:
# A -> SrcB, unpacker 0: B -> SrcA, each one UNPACR of 1024 datums that hands its bank to the
# Matrix Unit), thread 1 multiplies (the kernel of tensix/data/matmul_kernel.s: MVMUL computes
# Dst = SrcB x SrcA, waiting at the Wait Gate for both banks), runs the SFPU over Dst rows 0..63
# and posts semaphore 1 (MATH_PACK); thread 2 waits for it and packs Dst16b rows 0..63 with 16
# PACRs of four rows, replayed from the REPLAY buffer as LLK's MOP issues them.

.config ALU_ACC_CTRL_Fp32_enabled 1
.semaphore 1 0 1

# ---- unpackers: BF16 tiles of 1024 datums; unpacker 0's output starts at Dest_cntx0 (64:
# its first four rows do not exist, row 4 is SrcA row 0)
.config THCON_SEC0_REG0_TileDescriptor 0x04000015
.config THCON_SEC0_REG2_Out_data_format 5
.config THCON_SEC0_REG2_Disable_zero_compress_cntx0 1
.config THCON_SEC0_REG5_Tile_x_dim_cntx0 1024
.config THCON_SEC0_REG5_Dest_cntx0_address 64
.config THCON_SEC0_REG3_Base_address 0x1FFF
.config THCON_SEC1_REG0_TileDescriptor 0x04000015
.config THCON_SEC1_REG2_Out_data_format 5
.config THCON_SEC1_REG2_Disable_zero_compress_cntx0 1
.config THCON_SEC1_REG3_Base_address 0x0FFF

# ---- packer: BF16 from 16-bit Dst, 16 datums per row and interface, to 0x30000
.config PCK_DEST_RD_CTRL_Read_32b_data 0
.config ALU_FORMAT_SPEC_REG2_Dstacc 5
.config THCON_SEC0_REG1_In_data_format 5
.config THCON_SEC0_REG1_Out_data_format 5
.config PACK_COUNTERS_SEC0_pack_reads_per_xy_plane 16
.config PCK_EDGE_OFFSET_SEC0_mask 0xFFFF
.config PCK0_ADDR_CTRL_XY_REG_0_Ystride 32
.config THCON_SEC0_REG1_L1_Dest_addr 0x2FFF

.thread 0
.threadconfig SRCA_SET_SetOvrdWithAddr 1
TTI_SETADCXX(3, 1023, 0)                              # both unpackers: datums 0..1023
TTI_UNPACR(1, 0, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0, 1)     # unpacker 1: A (0x10000) -> SrcB
TTI_UNPACR(0, 0, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0, 1)     # unpacker 0: B (0x20000) -> SrcA

.include "matmul_kernel.s"                            # thread 1: the bundled kernel (tensix/data)

# ---- SFPU: each FP32 datum of Dst32b rows 0..63, its absolute value (SFPABS, float mode),
# to BF16 in Dst16b (AddrMod section 3 moves no counter); four rows and eight columns (even,
# then odd) per SFPLOAD/SFPABS/SFPSTORE
TTI_SFPLOAD(0, 3, 3, 0)
TTI_SFPABS(0, 0, 0, 1)
TTI_SFPSTORE(0, 2, 3, 0)
TTI_SFPLOAD(0, 3, 3, 2)
TTI_SFPABS(0, 0, 0, 1)
TTI_SFPSTORE(0, 2, 3, 2)
TTI_SFPLOAD(0, 3, 3, 4)
TTI_SFPABS(0, 0, 0, 1)
TTI_SFPSTORE(0, 2, 3, 4)
TTI_SFPLOAD(0, 3, 3, 6)
TTI_SFPABS(0, 0, 0, 1)
TTI_SFPSTORE(0, 2, 3, 6)
TTI_SFPLOAD(0, 3, 3, 8)
TTI_SFPABS(0, 0, 0, 1)
TTI_SFPSTORE(0, 2, 3, 8)
TTI_SFPLOAD(0, 3, 3, 10)
TTI_SFPABS(0, 0, 0, 1)
TTI_SFPSTORE(0, 2, 3, 10)
TTI_SFPLOAD(0, 3, 3, 12)
TTI_SFPABS(0, 0, 0, 1)
TTI_SFPSTORE(0, 2, 3, 12)
TTI_SFPLOAD(0, 3, 3, 14)
TTI_SFPABS(0, 0, 0, 1)
TTI_SFPSTORE(0, 2, 3, 14)
TTI_SFPLOAD(0, 3, 3, 16)
TTI_SFPABS(0, 0, 0, 1)
TTI_SFPSTORE(0, 2, 3, 16)
TTI_SFPLOAD(0, 3, 3, 18)
TTI_SFPABS(0, 0, 0, 1)
TTI_SFPSTORE(0, 2, 3, 18)
TTI_SFPLOAD(0, 3, 3, 20)
TTI_SFPABS(0, 0, 0, 1)
TTI_SFPSTORE(0, 2, 3, 20)
TTI_SFPLOAD(0, 3, 3, 22)
TTI_SFPABS(0, 0, 0, 1)
TTI_SFPSTORE(0, 2, 3, 22)
TTI_SFPLOAD(0, 3, 3, 24)
TTI_SFPABS(0, 0, 0, 1)
TTI_SFPSTORE(0, 2, 3, 24)
TTI_SFPLOAD(0, 3, 3, 26)
TTI_SFPABS(0, 0, 0, 1)
TTI_SFPSTORE(0, 2, 3, 26)
TTI_SFPLOAD(0, 3, 3, 28)
TTI_SFPABS(0, 0, 0, 1)
TTI_SFPSTORE(0, 2, 3, 28)
TTI_SFPLOAD(0, 3, 3, 30)
TTI_SFPABS(0, 0, 0, 1)
TTI_SFPSTORE(0, 2, 3, 30)
TTI_SFPLOAD(0, 3, 3, 32)
TTI_SFPABS(0, 0, 0, 1)
TTI_SFPSTORE(0, 2, 3, 32)
TTI_SFPLOAD(0, 3, 3, 34)
TTI_SFPABS(0, 0, 0, 1)
TTI_SFPSTORE(0, 2, 3, 34)
TTI_SFPLOAD(0, 3, 3, 36)
TTI_SFPABS(0, 0, 0, 1)
TTI_SFPSTORE(0, 2, 3, 36)
TTI_SFPLOAD(0, 3, 3, 38)
TTI_SFPABS(0, 0, 0, 1)
TTI_SFPSTORE(0, 2, 3, 38)
TTI_SFPLOAD(0, 3, 3, 40)
TTI_SFPABS(0, 0, 0, 1)
TTI_SFPSTORE(0, 2, 3, 40)
TTI_SFPLOAD(0, 3, 3, 42)
TTI_SFPABS(0, 0, 0, 1)
TTI_SFPSTORE(0, 2, 3, 42)
TTI_SFPLOAD(0, 3, 3, 44)
TTI_SFPABS(0, 0, 0, 1)
TTI_SFPSTORE(0, 2, 3, 44)
TTI_SFPLOAD(0, 3, 3, 46)
TTI_SFPABS(0, 0, 0, 1)
TTI_SFPSTORE(0, 2, 3, 46)
TTI_SFPLOAD(0, 3, 3, 48)
TTI_SFPABS(0, 0, 0, 1)
TTI_SFPSTORE(0, 2, 3, 48)
TTI_SFPLOAD(0, 3, 3, 50)
TTI_SFPABS(0, 0, 0, 1)
TTI_SFPSTORE(0, 2, 3, 50)
TTI_SFPLOAD(0, 3, 3, 52)
TTI_SFPABS(0, 0, 0, 1)
TTI_SFPSTORE(0, 2, 3, 52)
TTI_SFPLOAD(0, 3, 3, 54)
TTI_SFPABS(0, 0, 0, 1)
TTI_SFPSTORE(0, 2, 3, 54)
TTI_SFPLOAD(0, 3, 3, 56)
TTI_SFPABS(0, 0, 0, 1)
TTI_SFPSTORE(0, 2, 3, 56)
TTI_SFPLOAD(0, 3, 3, 58)
TTI_SFPABS(0, 0, 0, 1)
TTI_SFPSTORE(0, 2, 3, 58)
TTI_SFPLOAD(0, 3, 3, 60)
TTI_SFPABS(0, 0, 0, 1)
TTI_SFPSTORE(0, 2, 3, 60)
TTI_SFPLOAD(0, 3, 3, 62)
TTI_SFPABS(0, 0, 0, 1)
TTI_SFPSTORE(0, 2, 3, 62)
TTI_SEMPOST(2)                                        # MATH_PACK: Dst is ready

.thread 2
ttsetc16 37,4                                         # ADDR_MOD_PACK_SEC0: next four rows
TTI_SETADCXX(4, 15, 0)                                # packer: 16 datums per interface
ttreplay 0,16,0,1                                     # record the tile's 16 PACRs
TTI_PACR(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
TTI_PACR(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
TTI_PACR(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
TTI_PACR(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
TTI_PACR(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
TTI_PACR(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
TTI_PACR(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
TTI_PACR(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
TTI_PACR(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
TTI_PACR(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
TTI_PACR(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
TTI_PACR(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
TTI_PACR(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
TTI_PACR(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
TTI_PACR(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
TTI_PACR(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1)
TTI_SEMWAIT(4, 2, 1)                                  # hold PACR while MATH_PACK is 0
ttreplay 0,16,0,0                                     # pack: the 16 PACRs, as one run
TTI_SEMGET(2)
