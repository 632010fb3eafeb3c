// A command-line driver for the official Tensix simulator's coprocessor model
// (tenstorrent/ttsim), used by tools/ttsim_diff.py; it is compiled and linked with a ttsim
// source tree outside this project (see that script) and never needed by the tests.
//
// It reads commands on stdin and answers on stdout (little-endian binary): one command byte,
// then its arguments. ttsim reports errors by printing a line and exiting; its prints are
// sent to stderr so that stdout carries only answers, and the caller reads the error there.
//
//   'I'                          reset: tensix_init(), L1 zeroed
//   'C' bank u32, index u32, value u32      Config write
//   'c' bank u32, index u32      answers a Config word (u32)
//   'X' pipe u32, word u32       execute one instruction; answers 1 (done) or 0 (it waits)
//   'D' dst u16[1024][16], valid u8[1024]   set Dst      'd' answers them
//   'S' srca u32[2][64][16], srcb u32[2][64][16], meta u32[10]   set SrcA/SrcB
//                                (meta: A valid, unpack bank, matrix bank, B the same,
//                                 A formats[2], B formats[2])   's' answers them
//   'A' pipe u32, unit u32, u32[16]   set an address counter set (ch0 xyzw, ch1 xyzw, then
//                                the _cr copies in the same order)   'a' answers all [3][3][16]
//   'L' addr u32, n u32, bytes   write L1     'l' addr u32, n u32   answers the bytes
//   'G' pipe u32, index u32, value u32   set a GPR    'g' answers u32[3][64]
//   'R'                          answers per pipe the RWCs: SrcA, SrcA_Cr, SrcB, SrcB_Cr, Dst,
//                                Dst_Cr, fidelity (u32[3][7])
//   'P'                          answers the packer's carried state: valid, tpg x/y/z,
//                                datum and exponent addresses (u32[6])
//   'Q'                          quit

#include <unistd.h>
#include <cstdio>
#include <cstring>
#include "sim.h"

static int g_out = 1;

static void rd(void *p, size_t n) {
    uint8_t *b = static_cast<uint8_t *>(p);
    while (n) {
        ssize_t k = read(0, b, n);
        if (k <= 0) {
            _exit(0);
        }
        b += k;
        n -= size_t(k);
    }
}

static void wr(const void *p, size_t n) {
    const uint8_t *b = static_cast<const uint8_t *>(p);
    while (n) {
        ssize_t k = write(g_out, b, n);
        if (k <= 0) {
            _exit(2);
        }
        b += k;
        n -= size_t(k);
    }
}

static uint32_t rd32() {
    uint32_t v;
    rd(&v, 4);
    return v;
}

static void wr32(uint32_t v) {
    wr(&v, 4);
}

static uint32_t *addr_ctrl_words(TensixAddrCtrl *c) {
    return reinterpret_cast<uint32_t *>(c);
}

int main() {
    static_assert(sizeof(TensixAddrCtrl) == 16 * sizeof(uint32_t), "TensixAddrCtrl layout");
    g_out = dup(1);
    dup2(2, 1);  // ttsim's prints go to stderr
    TensixState *p = &g_t_tiles[0].tensix[0];
    uint8_t *sram = g_t_tiles[0].sram;
    for (;;) {
        uint8_t cmd;
        rd(&cmd, 1);
        switch (cmd) {
        case 'I':
            tensix_init(p, 0);
            memset(sram, 0, TENSIX_SRAM_SIZE);
            break;
        case 'C': {
            uint32_t bank = rd32(), index = rd32(), value = rd32();
            tensix_cfg_wr32(p, bank, 4 * index, value);
            break;
        }
        case 'c': {
            uint32_t bank = rd32(), index = rd32();
            wr32(tensix_cfg_rd32(p, bank, 4 * index));
            break;
        }
        case 'X': {
            uint32_t pipe = rd32(), word = rd32();
            uint8_t done = tensix_decode_and_execute(p, pipe, word) ? 1 : 0;
            wr(&done, 1);
            break;
        }
        case 'D':
            rd(p->dst, sizeof(p->dst));
            rd(p->dst_row_valid, sizeof(p->dst_row_valid));
            break;
        case 'd':
            wr(p->dst, sizeof(p->dst));
            wr(p->dst_row_valid, sizeof(p->dst_row_valid));
            break;
        case 'S': {
            rd(p->src_a, sizeof(p->src_a));
            rd(p->src_b, sizeof(p->src_b));
            uint32_t m[10];
            rd(m, sizeof(m));
            p->src_a_valid = m[0];
            p->src_a_unpack_bank = m[1];
            p->src_a_matrix_bank = m[2];
            p->src_b_valid = m[3];
            p->src_b_unpack_bank = m[4];
            p->src_b_matrix_bank = m[5];
            p->src_a_format[0] = m[6];
            p->src_a_format[1] = m[7];
            p->src_b_format[0] = m[8];
            p->src_b_format[1] = m[9];
            break;
        }
        case 's': {
            wr(p->src_a, sizeof(p->src_a));
            wr(p->src_b, sizeof(p->src_b));
            uint32_t m[10] = {p->src_a_valid, p->src_a_unpack_bank, p->src_a_matrix_bank,
                              p->src_b_valid, p->src_b_unpack_bank, p->src_b_matrix_bank,
                              p->src_a_format[0], p->src_a_format[1], p->src_b_format[0],
                              p->src_b_format[1]};
            wr(m, sizeof(m));
            break;
        }
        case 'A': {
            uint32_t pipe = rd32(), unit = rd32();
            rd(addr_ctrl_words(&p->addr_ctrl[pipe][unit]), 16 * sizeof(uint32_t));
            break;
        }
        case 'a':
            for (uint32_t pipe = 0; pipe < 3; pipe++) {
                for (uint32_t unit = 0; unit < 3; unit++) {
                    wr(addr_ctrl_words(&p->addr_ctrl[pipe][unit]), 16 * sizeof(uint32_t));
                }
            }
            break;
        case 'L': {
            uint32_t addr = rd32(), n = rd32();
            rd(sram + addr, n);
            break;
        }
        case 'l': {
            uint32_t addr = rd32(), n = rd32();
            wr(sram + addr, n);
            break;
        }
        case 'G': {
            uint32_t pipe = rd32(), index = rd32(), value = rd32();
            p->dma_regs[pipe][index] = value;
            break;
        }
        case 'g':
            wr(p->dma_regs, sizeof(p->dma_regs));
            break;
        case 'R':
            for (uint32_t pipe = 0; pipe < 3; pipe++) {
                uint32_t r[7] = {p->src_a_rwc[pipe], p->src_a_rwc_cr[pipe], p->src_b_rwc[pipe],
                                 p->src_b_rwc_cr[pipe], p->dst_rwc[pipe], p->dst_rwc_cr[pipe],
                                 p->fidelity[pipe]};
                wr(r, sizeof(r));
            }
            break;
        case 'P': {
            uint32_t s[6] = {p->packer_valid ? 1u : 0u, p->packer_tpg_x[0], p->packer_tpg_y[0],
                             p->packer_tpg_z[0], p->packer_dst_addr[0],
                             p->packer_dst_exp_addr[0]};
            wr(s, sizeof(s));
            break;
        }
        case 'Q':
            return 0;
        default:
            fprintf(stderr, "driver: unknown command %d\n", cmd);
            return 3;
        }
    }
}
