/* matmul reader (NCRISC): for each output tile t of this core (row-major over M x N tiles),
 * for each k, A[m, k] into CB 0 and B[k, n] into CB 1, read from interleaved DRAM buffers over
 * NOC 1 (command buffer 1).
 *
 * Runtime arguments: [0] A address, [1] B address, [2] Mt, [3] Kt, [4] Nt, [5] first output
 * tile, [6] output tiles, [7] DRAM banks, [8...] each bank's NOC coordinate (y << 6 | x).
 */
#include "kernel_api.h"

KERNEL_ENTRY

void kernel_main(void) {
    volatile uint32_t *args = runtime_args();
    uint32_t a_addr = args[0], b_addr = args[1], kt = args[3], nt = args[4];
    uint32_t first = args[5], count = args[6], nbanks = args[7];
    volatile uint32_t *banks = args + 8;
    cb_t a, b;
    noc_t noc;
    cb_init(&a, 0);
    cb_init(&b, 1);
    noc_init(&noc, 1, 1);
    for (uint32_t t = first; t < first + count; t++) {
        uint32_t m = t / nt, n = t % nt;
        for (uint32_t k = 0; k < kt; k++) {
            uint32_t pa = m * kt + k, pb = k * nt + n;
            cb_reserve_back(&a, 1);
            cb_reserve_back(&b, 1);
            noc_read(&noc, page_xy(banks, nbanks, pa),
                     page_addr(a_addr, nbanks, a.page_size, pa), a.wr, a.page_size);
            noc_read(&noc, page_xy(banks, nbanks, pb),
                     page_addr(b_addr, nbanks, b.page_size, pb), b.wr, b.page_size);
            noc_read_barrier(&noc);
            cb_push_back(&a, 1);
            cb_push_back(&b, 1);
        }
    }
}
