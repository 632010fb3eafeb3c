/* What isaforge's example kernels share: tt-metal's kernel ABI as the firmware and the host
 * set it up, written for isaforge from the layouts in tt_regs.h (dev_msgs.h's, the memory
 * map's) and the register protocol the dataflow API follows; no tt-metal code is copied.
 *
 * - Entry: the firmware calls the kernel at kernel_config_base + kernel_text_offset[PROC]
 *   (the launch message the host wrote) as a function with no arguments, on its own stack;
 *   the kernel returns when done. _start is first in .text (the linker script keeps it there).
 * - Runtime arguments: 32-bit words at kernel_config_base + rta_offset[PROC].rta_offset.
 * - Circular buffers: 4 words per CB (L1 address, size, number of pages, page size; bytes) at
 *   kernel_config_base + local_cb_offset; CB n's page counters are NOC overlay stream n's
 *   STREAM_REMOTE_DEST_BUF_SIZE (pages pushed) and _START (pages popped) registers, 16-bit.
 * - Tensix instructions: a TRISC pushes a word by storing it to INSTRN_BUF_BASE; reading
 *   PC_BUF word PC_BUF_TENSIX_SYNC_WORD waits until its Tensix thread is idle.
 * - NOC: a transaction is described in a command buffer's registers, then issued by writing
 *   NOC_CMD_CTRL; completion is seen in the NIU's status counters.
 */
#ifndef KERNEL_API_H
#define KERNEL_API_H

#include <stdint.h>
#include "tt_regs.h"
#include "tt_insn.h"

#define REG32(a) (*(volatile uint32_t *)(uintptr_t)(a))
#define L1_16(a) (*(volatile uint16_t *)(uintptr_t)(a))

/* the start of every kernel: _start calls kernel_main (placed first by the linker script) */
#define KERNEL_ENTRY \
    void kernel_main(void); \
    __attribute__((section(".text.start"), used, noinline)) void _start(void) { kernel_main(); }

static inline uint32_t launch_msg(void) {
    uint32_t rd = REG32(MEM_MAILBOX_BASE + MB_LAUNCH_RD_PTR);
    return MEM_MAILBOX_BASE + MB_LAUNCH + rd * LAUNCH_MSG_SIZE;
}

static inline uint32_t kernel_config_base(void) {
    return REG32(launch_msg() + KC_KERNEL_CONFIG_BASE);  /* [0]: the Tensix core type */
}

static inline volatile uint32_t *runtime_args(void) {
    uint32_t lm = launch_msg();
    uint32_t off = L1_16(lm + KC_RTA_OFFSET + PROC * RTA_OFFSET_SIZE);
    return (volatile uint32_t *)(uintptr_t)(REG32(lm + KC_KERNEL_CONFIG_BASE) + off);
}

/* -- circular buffers ------------------------------------------------------------------ */

typedef struct {
    uint32_t base, limit, page_size, num_pages, rd, wr, id;
} cb_t;

static inline void cb_init(cb_t *cb, uint32_t id) {
    uint32_t lm = launch_msg();
    uint32_t cfg = REG32(lm + KC_KERNEL_CONFIG_BASE) + L1_16(lm + KC_LOCAL_CB_OFFSET) + id * 16;
    cb->id = id;
    cb->base = REG32(cfg);
    cb->limit = cb->base + REG32(cfg + 4);
    cb->num_pages = REG32(cfg + 8);
    cb->page_size = REG32(cfg + 12);
    cb->rd = cb->wr = cb->base;
}

#define STREAM_REG(s, r) (NOC_OVERLAY_START_ADDR + (s) * NOC_STREAM_REG_SPACE_SIZE + (r) * 4u)
#define CB_RECEIVED(cb) REG32(STREAM_REG((cb)->id, STREAM_REMOTE_DEST_BUF_SIZE_REG_INDEX))
#define CB_ACKED(cb) REG32(STREAM_REG((cb)->id, STREAM_REMOTE_DEST_BUF_START_REG_INDEX))

static inline uint32_t cb_filled(const cb_t *cb) {
    return (CB_RECEIVED(cb) - CB_ACKED(cb)) & 0xFFFFu;
}

static inline void cb_reserve_back(cb_t *cb, uint32_t n) {
    while (cb->num_pages - cb_filled(cb) < n) {
    }
}

static inline void cb_push_back(cb_t *cb, uint32_t n) {
    CB_RECEIVED(cb) = (CB_RECEIVED(cb) + n) & 0xFFFFu;
    cb->wr += n * cb->page_size;
    if (cb->wr >= cb->limit) cb->wr -= cb->limit - cb->base;
}

static inline void cb_wait_front(cb_t *cb, uint32_t n) {
    while (cb_filled(cb) < n) {
    }
}

static inline void cb_pop_front(cb_t *cb, uint32_t n) {
    CB_ACKED(cb) = (CB_ACKED(cb) + n) & 0xFFFFu;
    cb->rd += n * cb->page_size;
    if (cb->rd >= cb->limit) cb->rd -= cb->limit - cb->base;
}

/* -- the NOC --------------------------------------------------------------------------- */

/* NOC_CTRL command bits (tt-metal's noc_parameters.h names): copy, write, response marked,
   static virtual channel */
#define NOC_CMD_WR (1u << 1)
#define NOC_CMD_RESP_MARKED (1u << 4)
#define NOC_CMD_VC_STATIC (1u << 7)
#define NOC_CMD_STATIC_VC(vc) ((uint32_t)(vc) << 13)
#define NOC_CTRL_SEND_REQ 1u

#define NOC_REG(noc, buf, reg) \
    REG32((reg) + (buf) * NOC_CMD_BUF_OFFSET + (noc) * NOC_INSTANCE_OFFSET)
#define NOC_STATUS(noc, i) REG32(NOC_STATUS_BASE + (noc) * NOC_INSTANCE_OFFSET + (i) * 4u)
#define NOC_MY_XY(noc) REG32(NOC_CFG_BASE + (noc) * NOC_INSTANCE_OFFSET + NOC_ID_LOGICAL * 4u)

typedef struct {
    uint32_t noc, buf, reads, writes;
} noc_t;

/* Use command buffer buf of NOC noc for transactions of len bytes, reads (write = 0) or
   writes (write = 1): the registers that stay the same (the command, this tile's coordinate,
   the high address bits, the length) are written once here; each transaction then writes
   only its addresses and the target's coordinate. */
static inline void noc_init(noc_t *n, uint32_t noc, uint32_t buf, int write, uint32_t len) {
    uint32_t my_xy = NOC_MY_XY(noc);
    n->noc = noc;
    n->buf = buf;
    n->reads = NOC_STATUS(noc, NIU_MST_RD_RESP_RECEIVED);
    n->writes = NOC_STATUS(noc, NIU_MST_WR_ACK_RECEIVED);
    while (NOC_REG(noc, buf, NOC_CMD_CTRL) != 0) {
    }
    NOC_REG(noc, buf, NOC_CTRL) = (write ? NOC_CMD_WR : 0) | NOC_CMD_RESP_MARKED |
                                  NOC_CMD_VC_STATIC | NOC_CMD_STATIC_VC(write ? 0 : 1);
    NOC_REG(noc, buf, NOC_TARG_ADDR_MID) = 0;
    NOC_REG(noc, buf, NOC_RET_ADDR_MID) = 0;
    if (write) {
        NOC_REG(noc, buf, NOC_TARG_ADDR_HI) = my_xy;
        NOC_REG(noc, buf, NOC_BRCST_EXCLUDE) = 0;
    } else {
        NOC_REG(noc, buf, NOC_RET_ADDR_HI) = my_xy;
    }
    NOC_REG(noc, buf, NOC_AT_LEN_BE) = len;
}

static inline void noc_wait_ready(const noc_t *n) {
    while (NOC_REG(n->noc, n->buf, NOC_CMD_CTRL) != 0) {
    }
}

/* read (noc_init'd length) bytes at addr of the NOC endpoint xy (y << 6 | x) into L1 at dst */
static inline void noc_read(noc_t *n, uint32_t xy, uint32_t addr, uint32_t dst) {
    noc_wait_ready(n);
    NOC_REG(n->noc, n->buf, NOC_RET_ADDR_LO) = dst;
    NOC_REG(n->noc, n->buf, NOC_TARG_ADDR_LO) = addr;
    NOC_REG(n->noc, n->buf, NOC_TARG_ADDR_HI) = xy;
    NOC_REG(n->noc, n->buf, NOC_CMD_CTRL) = NOC_CTRL_SEND_REQ;
    n->reads++;
}

/* write (noc_init'd length) bytes of L1 at src to addr of the NOC endpoint xy */
static inline void noc_write(noc_t *n, uint32_t src, uint32_t xy, uint32_t addr) {
    noc_wait_ready(n);
    NOC_REG(n->noc, n->buf, NOC_TARG_ADDR_LO) = src;
    NOC_REG(n->noc, n->buf, NOC_RET_ADDR_LO) = addr;
    NOC_REG(n->noc, n->buf, NOC_RET_ADDR_HI) = xy;
    NOC_REG(n->noc, n->buf, NOC_CMD_CTRL) = NOC_CTRL_SEND_REQ;
    n->writes++;
}

static inline void noc_read_barrier(const noc_t *n) {
    while (NOC_STATUS(n->noc, NIU_MST_RD_RESP_RECEIVED) != n->reads) {
    }
}

static inline void noc_write_barrier(const noc_t *n) {
    while (NOC_STATUS(n->noc, NIU_MST_WR_ACK_RECEIVED) != n->writes) {
    }
}

/* page p of an interleaved DRAM buffer at addr: bank p % nbanks, at addr + (p / nbanks) * size
   in that bank; xy[] holds the banks' NOC coordinates */
static inline uint32_t page_xy(volatile uint32_t *xy, uint32_t nbanks, uint32_t p) {
    return xy[p % nbanks];
}

static inline uint32_t page_addr(uint32_t addr, uint32_t nbanks, uint32_t size, uint32_t p) {
    return addr + (p / nbanks) * size;
}

/* -- Tensix ---------------------------------------------------------------------------- */

#define TT_PUSH(word) (REG32(INSTRN_BUF_BASE) = (word))

/* wait until this TRISC's Tensix thread has no instruction in flight (tt-llk: tensix_sync) */
static inline void tensix_sync(void) {
    (void)REG32(PC_BUF_BASE + PC_BUF_TENSIX_SYNC_WORD * 4u);
}

/* read-modify-write of a Config field (bank 0) from RISC-V; args: CFG_<NAME> */
static inline void cfg_write(uint32_t index, uint32_t shift, uint32_t width, uint32_t value) {
    volatile uint32_t *w = (volatile uint32_t *)(uintptr_t)(TENSIX_CFG_BASE + index * 4u);
    uint32_t mask = (width >= 32 ? 0xFFFFFFFFu : ((1u << width) - 1u)) << shift;
    *w = (*w & ~mask) | ((value << shift) & mask);
}

/* a whole Config word (bank 0) from RISC-V; index: CFGW_<NAME> (+ n for the words after) */
static inline void cfg_word(uint32_t index, uint32_t value) {
    REG32(TENSIX_CFG_BASE + index * 4u) = value;
}

/* GPR g (of this thread) = value, through SETDMAREG (16 bits at a time) */
static inline void tt_set_gpr(uint32_t g, uint32_t value) {
    TT_PUSH(TT_OP_SETDMAREG(value >> 30, (value >> 16) & 0x3FFF, 0, 2 * g + 1));
    TT_PUSH(TT_OP_SETDMAREG((value >> 14) & 3, value & 0x3FFF, 0, 2 * g));
}

#endif
