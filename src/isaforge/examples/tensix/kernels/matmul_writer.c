/* matmul writer (BRISC): each output tile of this core from CB 16 to the interleaved DRAM
 * buffer C over NOC 0 (command buffer 0).
 *
 * Runtime arguments: [0] C address, [1] first output tile, [2] output tiles, [3] DRAM banks,
 * [4...] each bank's NOC coordinate (y << 6 | x).
 */
#include "kernel_api.h"

KERNEL_ENTRY

void kernel_main(void) {
    volatile uint32_t *args = runtime_args();
    uint32_t c_addr = args[0], first = args[1], count = args[2], nbanks = args[3];
    volatile uint32_t *banks = args + 4;
    cb_t c;
    noc_t noc;
    cb_init(&c, 16);
    noc_init(&noc, 0, 0, 1, c.page_size);
    for (uint32_t t = first; t < first + count; t++) {
        cb_wait_front(&c, 1);
        noc_write(&noc, c.rd, page_xy(banks, nbanks, t), page_addr(c_addr, nbanks, c.page_size, t));
        noc_write_barrier(&noc);
        cb_pop_front(&c, 1);
    }
}
