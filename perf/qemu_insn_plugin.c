/* A QEMU TCG plugin that counts the guest instructions a run executes, for
 * perf/emulated_insns.sh. Debian ships qemu-user with plugin support but without
 * qemu-plugin.h, so the few entry points used are declared here as QEMU's
 * plugin API version 1 (QEMU 4.2 and later, bookworm's 7.2 included) defines
 * them. At exit the count goes to the file named by QEMU_INSN_OUT (stderr
 * when unset). Built by the script with the host compiler:
 *   cc -shared -fPIC -O2 perf/qemu_insn_plugin.c -o insn.so
 *   qemu-aarch64 -plugin ./insn.so PROGRAM ... */
#include <inttypes.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

typedef uint64_t qemu_plugin_id_t;
struct qemu_plugin_tb;
typedef void (*qemu_plugin_vcpu_tb_trans_cb_t)(qemu_plugin_id_t id, struct qemu_plugin_tb* tb);
typedef void (*qemu_plugin_udata_cb_t)(qemu_plugin_id_t id, void* userdata);
enum { kQemuPluginInlineAddU64 = 0 }; /* QEMU_PLUGIN_INLINE_ADD_U64 */

void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id, qemu_plugin_vcpu_tb_trans_cb_t cb);
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb* tb);
void qemu_plugin_register_vcpu_tb_exec_inline(struct qemu_plugin_tb* tb, int op, void* ptr,
                                              uint64_t imm);
void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id, qemu_plugin_udata_cb_t cb, void* userdata);

__attribute__((visibility("default"))) int qemu_plugin_version = 1;

static uint64_t executed;

/* Each translated block adds its instruction count every time it runs (an
 * inline add: one counter, so a single-threaded guest only). */
static void OnTranslate(qemu_plugin_id_t id, struct qemu_plugin_tb* tb) {
  (void)id;
  qemu_plugin_register_vcpu_tb_exec_inline(tb, kQemuPluginInlineAddU64, &executed,
                                           qemu_plugin_tb_n_insns(tb));
}

static void OnExit(qemu_plugin_id_t id, void* userdata) {
  (void)id;
  (void)userdata;
  const char* path = getenv("QEMU_INSN_OUT");
  FILE* out = path != NULL ? fopen(path, "w") : stderr;
  if (out == NULL) return;
  fprintf(out, "%" PRIu64 "\n", executed);
  if (out != stderr) fclose(out);
}

__attribute__((visibility("default"))) int qemu_plugin_install(qemu_plugin_id_t id,
                                                               const void* info, int argc,
                                                               char** argv) {
  (void)info;
  (void)argc;
  (void)argv;
  qemu_plugin_register_vcpu_tb_trans_cb(id, OnTranslate);
  qemu_plugin_register_atexit_cb(id, OnExit, NULL);
  return 0;
}
