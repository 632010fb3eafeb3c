/* matmul compute kernel, one source for the three TRISCs (built with -DTRISC=0, 1, 2):
 * C[t] = sum over k of A[m, k] x B[k, n] for the output tiles t of this core, BF16 tiles in
 * L1, FP32 accumulation in Dst, BF16 out.
 *
 * Runtime arguments (the same for the three): [0] output tiles, [1] Kt, [2] fidelity phases
 * (1 LoFi, 2 HiFi2, 3 HiFi3, 4 HiFi4), [3] kb (the K block: divides Kt), [4] the first output
 * tile, [5] Nt.
 * CBs (as the reader fills them): 0 = a row of A (Kt tiles, a new one when a new row of
 * output tiles starts), 1 = B in blocks of kb tiles along K, 16 = C tiles.
 *
 * TRISC0 (unpack): per block of kb, sets the unpackers' base addresses to the block's first
 *   A and B tiles (its thread is idle then), zeroes their Z counters and issues one MOP: kb
 *   times one UNPACR each (unpacker 1: A -> SrcB, unpacker 0: B -> SrcA; 1024 datums, handing
 *   the banks to the Matrix Unit, then Z + 1: the next tile); then waits for its thread
 *   (TTSync) and pops the block.
 * TRISC1 (math): per output tile waits for Dst (semaphore MATH_PACK below its max), clears it
 *   (ZEROACC), then per block one MOP: kb times (once per fidelity phase, the 16 MVMULs of the
 *   seed's replay: Dst += SrcB x SrcA over a 32x32x32 tile; then SETRWC giving the banks back
 *   and resetting the counters); then posts MATH_PACK.
 * TRISC2 (pack): per output tile reserves a C page, points the packer at it, waits for
 *   MATH_PACK, packs Dst's 64 FP32 rows as BF16 with 16 PACRs (replayed), releases MATH_PACK,
 *   waits for its thread and pushes the page.
 *
 * The model executes a thread's instructions in order, so the packer's WRCFG takes effect for
 * the PACRs after it; tt-llk's double-buffered configuration contexts are not used.
 */
#include "kernel_api.h"

KERNEL_ENTRY

#define CB_A 0
#define CB_B 1
#define CB_C 16
#define GPR_ADDR 50u   /* a GPR this kernel uses; low GPRs are the firmware's and tt-llk's */
#define SEM_MATH_PACK 1u
#define BF16 5u

static inline uint32_t l1_16b(uint32_t addr) { return (addr >> 4) - 1u; }

#if TRISC == 0
static void unpack(uint32_t tiles, uint32_t kt, uint32_t kb, uint32_t first, uint32_t nt) {
    volatile uint32_t *mop = (volatile uint32_t *)(uintptr_t)TENSIX_MOP_CFG_BASE;
    /* AddrMode 1: after each tile, channel 0's Z counter + 1 = the next 1024 datums in L1 */
    uint32_t unpack_a = TT_OP_UNPACR(1, 1, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0, 1);  /* A -> SrcB */
    uint32_t unpack_b = TT_OP_UNPACR(0, 1, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0, 1);  /* B -> SrcA */
    cb_t a, b;
    cb_init(&a, CB_A);
    cb_init(&b, CB_B);
    /* both unpackers: BF16 tiles of 1024 x 1 (x 1 x 1) datums, no compression; unpacker 0
       writes SrcA from Dest_cntx0_address 64 (SrcA row 0 is its row 4) */
    cfg_word(CFGW_THCON_SEC0_REG0_TILEDESCRIPTOR, 0x04000000u | 0x10u | BF16);
    cfg_word(CFGW_THCON_SEC0_REG0_TILEDESCRIPTOR + 1, 1);
    cfg_write(CFG_THCON_SEC0_REG2_OUT_DATA_FORMAT, BF16);
    cfg_write(CFG_THCON_SEC0_REG2_DISABLE_ZERO_COMPRESS_CNTX0, 1);
    cfg_write(CFG_THCON_SEC0_REG5_TILE_X_DIM_CNTX0, 1024);
    cfg_write(CFG_THCON_SEC0_REG5_DEST_CNTX0_ADDRESS, 64);
    cfg_word(CFGW_THCON_SEC1_REG0_TILEDESCRIPTOR, 0x04000000u | 0x10u | BF16);
    cfg_word(CFGW_THCON_SEC1_REG0_TILEDESCRIPTOR + 1, 1);
    cfg_write(CFG_THCON_SEC1_REG2_OUT_DATA_FORMAT, BF16);
    cfg_write(CFG_THCON_SEC1_REG2_DISABLE_ZERO_COMPRESS_CNTX0, 1);
    /* MOP template 1: one outer iteration of kb x (unpack A, unpack B) */
    mop[0] = 1;
    mop[1] = kb;
    mop[2] = TT_OP_NOP();
    mop[3] = TT_OP_NOP();
    mop[4] = TT_OP_NOP();
    mop[5] = unpack_a;
    mop[6] = unpack_b;
    mop[7] = unpack_b;
    mop[8] = unpack_b;
    TT_PUSH(TT_OP_SETC16(5, 1u << 2));                  /* SRCA_SET_SetOvrdWithAddr */
    TT_PUSH(TT_OP_SETADCXX(3, 1023, 0));                /* both unpackers: datums 0..1023 */
    for (uint32_t t = first; t < first + tiles; t++) {
        if (t == first || t % nt == 0) {                /* a new row of A */
            if (t != first) cb_pop_front(&a, kt);
            cb_wait_front(&a, kt);
        }
        for (uint32_t k0 = 0; k0 < kt; k0 += kb) {
            cb_wait_front(&b, kb);
            /* the thread is idle (tensix_sync below): the base addresses can change */
            cfg_word(CFGW_THCON_SEC1_REG3_BASE_ADDRESS, l1_16b(a.rd + k0 * a.page_size));
            cfg_word(CFGW_THCON_SEC0_REG3_BASE_ADDRESS, l1_16b(b.rd));
            TT_PUSH(TT_OP_SETADCZW(3, 0, 0, 0, 0, 1));     /* both: channel 0 Z = 0 */
            TT_PUSH(TT_OP_MOP(1, 0, 0));
            tensix_sync();                              /* the unpackers have read L1 */
            cb_pop_front(&b, kb);
        }
    }
    if (tiles) cb_pop_front(&a, kt);
}
#endif

#if TRISC == 1
static void math(uint32_t tiles, uint32_t kt, uint32_t phases, uint32_t kb) {
    volatile uint32_t *mop = (volatile uint32_t *)(uintptr_t)TENSIX_MOP_CFG_BASE;
    uint32_t replay = TT_OP_REPLAY(16, 16, 0, 0);
    cfg_write(CFG_ALU_ACC_CTRL_FP32_ENABLED, 1);
    /* MOP template 1: kb outer iterations (one per tile along K) of one replay of the 16
       MVMULs per fidelity phase, each followed by SETRWC: banks back to the unpackers, the
       counters (and the fidelity phase) to 0 */
    mop[0] = kb;
    mop[1] = phases;
    mop[2] = TT_OP_NOP();
    mop[3] = TT_OP_SETRWC(3, 0, 0, 0, 0, 15);
    mop[4] = TT_OP_NOP();
    mop[5] = replay;
    mop[6] = TT_OP_NOP();
    mop[7] = replay;
    mop[8] = replay;
    /* the AddrMod sections of the MVMUL sequence (ADDR_MOD_AB/DST_SEC0..4) */
    TT_PUSH(TT_OP_SETC16(12, 0x800));
    TT_PUSH(TT_OP_SETC16(28, 0x8));
    TT_PUSH(TT_OP_SETC16(13, 0x4010));
    TT_PUSH(TT_OP_SETC16(29, 0x8));
    TT_PUSH(TT_OP_SETC16(14, 0x6040));
    TT_PUSH(TT_OP_SETC16(30, 0x8));
    TT_PUSH(TT_OP_SETC16(16, 0x7060));
    TT_PUSH(TT_OP_SETC16(32, 0x400));
    TT_PUSH(TT_OP_SETC16(17, 0x8080));
    TT_PUSH(TT_OP_SETC16(33, 0x2800));
    /* record the 16 MVMULs of a 32x32x32 tile at replay index 16 */
    static const uint8_t modes[16] = {0, 1, 0, 2, 0, 1, 0, 4, 0, 1, 0, 2, 0, 1, 0, 5};
    TT_PUSH(TT_OP_REPLAY(16, 16, 0, 1));
    for (int i = 0; i < 16; i++) TT_PUSH(TT_OP_MVMUL(0, 0, modes[i], 0));
    TT_PUSH(TT_OP_SEMINIT(1, 0, 1u << SEM_MATH_PACK));
    TT_PUSH(TT_OP_SETRWC(0, 0, 0, 0, 0, 15));
    for (uint32_t t = 0; t < tiles; t++) {
        TT_PUSH(TT_OP_SEMWAIT(0x142, 1u << SEM_MATH_PACK, 2));  /* Dst free: below max */
        TT_PUSH(TT_OP_ZEROACC(3, 0, 0, 0, 0));
        for (uint32_t k0 = 0; k0 < kt; k0 += kb) TT_PUSH(TT_OP_MOP(1, 0, 0));
        TT_PUSH(TT_OP_SEMPOST(1u << SEM_MATH_PACK));
    }
}
#endif

#if TRISC == 2
static void pack(uint32_t tiles) {
    cb_t c;
    cb_init(&c, CB_C);
    /* FP32 Dst rows, through BF16, to BF16 in L1; 16 datums per row, four rows per PACR */
    cfg_write(CFG_PCK_DEST_RD_CTRL_READ_32B_DATA, 1);
    cfg_write(CFG_ALU_FORMAT_SPEC_REG2_DSTACC, BF16);
    cfg_write(CFG_THCON_SEC0_REG1_IN_DATA_FORMAT, BF16);
    cfg_write(CFG_THCON_SEC0_REG1_OUT_DATA_FORMAT, BF16);
    cfg_write(CFG_PACK_COUNTERS_SEC0_PACK_READS_PER_XY_PLANE, 16);
    cfg_write(CFG_PCK_EDGE_OFFSET_SEC0_MASK, 0xFFFF);
    cfg_write(CFG_PCK0_ADDR_CTRL_XY_REG_0_YSTRIDE, 32);
    TT_PUSH(TT_OP_SETC16(37, 4));                       /* ADDR_MOD_PACK_SEC0: +4 rows */
    TT_PUSH(TT_OP_SETADCXX(4, 15, 0));                  /* packer: 16 datums per row */
    TT_PUSH(TT_OP_REPLAY(0, 16, 0, 1));
    for (int i = 0; i < 16; i++) TT_PUSH(TT_OP_PACR(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, i == 15));
    for (uint32_t t = 0; t < tiles; t++) {
        cb_reserve_back(&c, 1);
        tt_set_gpr(GPR_ADDR, l1_16b(c.wr));
        TT_PUSH(TT_OP_WRCFG(GPR_ADDR, 0, 69));          /* THCON_SEC0_REG1_L1_Dest_addr */
        TT_PUSH(TT_OP_SETADCXY(4, 0, 0, 0, 0, 0xA));    /* packer Y counters to the tile start */
        TT_PUSH(TT_OP_SEMWAIT(4, 1u << SEM_MATH_PACK, 1));  /* hold PACR until Dst is ready */
        TT_PUSH(TT_OP_REPLAY(0, 16, 0, 0));
        TT_PUSH(TT_OP_SEMGET(1u << SEM_MATH_PACK));
        tensix_sync();                                  /* the tile is in L1 */
        cb_push_back(&c, 1);
    }
}
#endif

void kernel_main(void) {
    volatile uint32_t *args = runtime_args();
    uint32_t tiles = args[0];
#if TRISC == 0
    unpack(tiles, args[1], args[3], args[4], args[5]);
#elif TRISC == 1
    math(tiles, args[1], args[2], args[3]);
#else
    pack(tiles);
#endif
}
