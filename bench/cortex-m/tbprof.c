/* tbprof: a tiny QEMU TCG plugin that counts executed guest instructions per
 * translation-block start address and writes "<hex pc> <instructions>" lines
 * at exit (to the file named by the plugin argument out=FILE, default
 * tbprof.txt). profile.py maps the addresses to functions with the ELF's
 * symbol table. Our own code against QEMU's public plugin ABI (only the few
 * entry points used are declared here, so no QEMU headers are needed; the ABI
 * of these calls is unchanged since the plugin API appeared in QEMU 4.2). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef uint64_t qemu_plugin_id_t;
struct qemu_plugin_tb;
typedef struct qemu_info_t qemu_info_t;
enum qemu_plugin_op { QEMU_PLUGIN_INLINE_ADD_U64 };
typedef void (*tb_trans_cb)(qemu_plugin_id_t, struct qemu_plugin_tb*);
typedef void (*udata_cb)(qemu_plugin_id_t, void*);
extern void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t, tb_trans_cb);
extern void qemu_plugin_register_vcpu_tb_exec_inline(struct qemu_plugin_tb*, enum qemu_plugin_op,
                                                     void*, uint64_t);
extern size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb*);
extern uint64_t qemu_plugin_tb_vaddr(const struct qemu_plugin_tb*);
extern void qemu_plugin_register_atexit_cb(qemu_plugin_id_t, udata_cb, void*);

__attribute__((visibility("default"))) int qemu_plugin_version = 1;

/* One counter per distinct TB start address (open addressing). */
#define SLOTS (1u << 20)
static struct slot { uint64_t pc, count; } *table;
static char out_path[512] = "tbprof.txt";

static struct slot* lookup(uint64_t pc) {
  uint32_t h = (uint32_t)((pc >> 1) * 2654435761u) & (SLOTS - 1);
  while (table[h].pc != 0 && table[h].pc != pc + 1) h = (h + 1) & (SLOTS - 1);
  table[h].pc = pc + 1; /* +1: address 0 is a valid pc */
  return &table[h];
}

static void on_trans(qemu_plugin_id_t id, struct qemu_plugin_tb* tb) {
  (void)id;
  struct slot* s = lookup(qemu_plugin_tb_vaddr(tb));
  /* Adds the block's instruction count each time it runs (inline, no call). */
  qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64, &s->count,
                                           qemu_plugin_tb_n_insns(tb));
}

static void at_exit(qemu_plugin_id_t id, void* p) {
  (void)id; (void)p;
  FILE* f = fopen(out_path, "w");
  if (!f) return;
  for (uint32_t i = 0; i < SLOTS; ++i)
    if (table[i].pc && table[i].count)
      fprintf(f, "%llx %llu\n", (unsigned long long)(table[i].pc - 1),
              (unsigned long long)table[i].count);
  fclose(f);
}

__attribute__((visibility("default"))) int qemu_plugin_install(qemu_plugin_id_t id,
                                                              const qemu_info_t* info,
                                                              int argc, char** argv) {
  (void)info;
  for (int i = 0; i < argc; ++i)
    if (strncmp(argv[i], "out=", 4) == 0) snprintf(out_path, sizeof out_path, "%s", argv[i] + 4);
  table = calloc(SLOTS, sizeof *table);
  if (!table) return -1;
  qemu_plugin_register_vcpu_tb_trans_cb(id, on_trans);
  qemu_plugin_register_atexit_cb(id, at_exit, NULL);
  return 0;
}
