// Minimal bare-metal start for QEMU mps2-an386 (Cortex-M4): vector table,
// zeroed .bss, C++ constructors, main, then semihosting exit.
#include <stdint.h>
extern uint32_t __bss_start, __bss_end, __stack_top;
extern void (*__init_array_start[])(void), (*__init_array_end[])(void);
int main(void);
void semihost_exit(int code);
void reset_handler(void) {
  for (uint32_t* p = &__bss_start; p < &__bss_end; ++p) *p = 0;
  for (void (**f)(void) = __init_array_start; f < __init_array_end; ++f) (*f)();
  semihost_exit(main());
}
static void fault_handler(void) { semihost_exit(99); }
__attribute__((section(".vectors"), used)) void* const vectors[16] = {
    &__stack_top, (void*)reset_handler, (void*)fault_handler, (void*)fault_handler,
    (void*)fault_handler, (void*)fault_handler, (void*)fault_handler, 0, 0, 0, 0,
    (void*)fault_handler, (void*)fault_handler, 0, (void*)fault_handler, (void*)fault_handler};
static int semihost(int op, const void* arg) {
  register int r0 __asm__("r0") = op;
  register const void* r1 __asm__("r1") = arg;
  __asm__ volatile("bkpt 0xab" : "+r"(r0) : "r"(r1) : "memory");
  return r0;
}
void semihost_write0(const char* s) { semihost(0x04, s); }
void semihost_exit(int code) {
  // SYS_EXIT with ADP_Stopped_ApplicationExit (0x20026) = exit 0, else RunTimeErrorUnknown.
  semihost(0x18, (const void*)(uintptr_t)(code == 0 ? 0x20026 : 0x20023));
  for (;;) {}
}
// Not needed by TFLM at run time, but referenced by libstdc++/newlib bits.
void* __dso_handle = 0;
void _exit(int code) { semihost_exit(code); for (;;) {} }
