/* matmul reader (NCRISC): A and B tiles from interleaved DRAM buffers over NOC 1 (command
 * buffer 1), in the order the compute kernel consumes them.
 *
 * For the output tiles t of this core (row-major over Mt x Nt tiles, from "first"): when a new
 * row of A starts (the first tile, or n == 0), its Kt tiles A[m, 0..Kt) into CB 0 as one block;
 * then for each block of kb tiles along K, B[k, n] for those k into CB 1.
 *
 * Runtime arguments: [0] A address, [1] B address, [2] Mt, [3] Kt, [4] Nt, [5] first output
 * tile, [6] output tiles, [7] kb (divides Kt), [8] DRAM banks, [9...] each bank's NOC
 * coordinate (y << 6 | x). Page p of a buffer is in bank p % banks at address + (p / banks) *
 * page size.
 */
#include "kernel_api.h"

KERNEL_ENTRY

void kernel_main(void) {
    volatile uint32_t *args = runtime_args();
    uint32_t a_addr = args[0], b_addr = args[1], kt = args[3], nt = args[4];
    uint32_t first = args[5], count = args[6], kb = args[7], nbanks = args[8];
    volatile uint32_t *banks = args + 9;
    cb_t a, b;
    noc_t noc;
    cb_init(&a, 0);
    cb_init(&b, 1);
    noc_init(&noc, 1, 1, 0, a.page_size);
    for (uint32_t t = first; t < first + count; t++) {
        uint32_t m = t / nt, n = t % nt;
        if (t == first || n == 0) {
            cb_reserve_back(&a, kt);
            for (uint32_t k = 0; k < kt; k++) {
                uint32_t p = m * kt + k;
                noc_read(&noc, page_xy(banks, nbanks, p),
                         page_addr(a_addr, nbanks, a.page_size, p), a.wr + k * a.page_size);
            }
            noc_read_barrier(&noc);
            cb_push_back(&a, kt);
        }
        for (uint32_t k0 = 0; k0 < kt; k0 += kb) {
            cb_reserve_back(&b, kb);
            for (uint32_t k = 0; k < kb; k++) {
                uint32_t p = (k0 + k) * nt + n;
                noc_read(&noc, page_xy(banks, nbanks, p),
                         page_addr(b_addr, nbanks, b.page_size, p), b.wr + k * b.page_size);
            }
            noc_read_barrier(&noc);
            cb_push_back(&b, kb);
        }
    }
}
