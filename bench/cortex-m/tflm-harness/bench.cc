// Counts the instructions of TFLM's MicroInterpreter::Invoke() on QEMU
// mps2-an386 run with -icount shift=0 (one instruction = 1 ns of virtual time):
// the CMSDK APB timer 0 (25 MHz, 32-bit down counter) is read before and after
// each Invoke, so one tick = 40 instructions. The empty interval is subtracted.
#include <stdint.h>
#include <string.h>
#include "tensorflow/lite/micro/micro_interpreter.h"
#include "tensorflow/lite/micro/micro_mutable_op_resolver.h"
#include "tensorflow/lite/schema/schema_generated.h"

extern "C" {
extern const uint8_t model_data[], model_end[], input_data[], input_end[],
    expected_data[], expected_end[];
void semihost_write0(const char* s);
}
namespace {
volatile uint32_t* const kTimerCtrl = reinterpret_cast<volatile uint32_t*>(0x40000000);
volatile uint32_t* const kTimerValue = reinterpret_cast<volatile uint32_t*>(0x40000004);
volatile uint32_t* const kTimerReload = reinterpret_cast<volatile uint32_t*>(0x40000008);
constexpr uint32_t kNsPerTick = 40;  // 25 MHz

alignas(16) uint8_t arena[ARENA_BYTES];

void put(const char* s) { semihost_write0(s); }
void put_u(uint64_t v) {
  char b[24];
  int i = 23;
  b[i] = 0;
  do { b[--i] = static_cast<char>('0' + v % 10); v /= 10; } while (v);
  put(b + i);
}
uint32_t now() { return *kTimerValue; }
}  // namespace

int main() {
  *kTimerReload = 0xffffffffu;
  *kTimerValue = 0xffffffffu;
  *kTimerCtrl = 1;
  const tflite::Model* model = tflite::GetModel(model_data);
  tflite::MicroMutableOpResolver<8> resolver;
  OPS(resolver);
  tflite::MicroInterpreter interpreter(model, resolver, arena, sizeof(arena));
  if (interpreter.AllocateTensors() != kTfLiteOk) { put("AllocateTensors failed\n"); return 1; }
  size_t at = 0;
  for (size_t i = 0; i < interpreter.inputs_size(); ++i) {
    TfLiteTensor* t = interpreter.input(i);
    memcpy(t->data.raw, input_data + at, t->bytes);
    at += t->bytes;
  }
  if (at != static_cast<size_t>(input_end - input_data)) { put("input length mismatch\n"); return 1; }
  uint32_t a = now(), b = now();
  const uint32_t empty = a - b;
  put("engine " ENGINE " model " MODEL_NAME " arena_used ");
  put_u(interpreter.arena_used_bytes());
  put(" embedded_model_bytes ");
  put_u(static_cast<uint64_t>(model_end - model_data));
  put("\n");
  for (int run = 0; run < RUNS; ++run) {
    a = now();
    TfLiteStatus s = interpreter.Invoke();
    b = now();
    if (s != kTfLiteOk) { put("Invoke failed\n"); return 1; }
    put("invoke ");
    put_u(run);
    put(" instructions ");
    put_u(static_cast<uint64_t>(a - b - empty) * kNsPerTick);
    if (run == 0) {
      size_t o = 0;
      bool same = true;
      for (size_t i = 0; i < interpreter.outputs_size(); ++i) {
        TfLiteTensor* t = interpreter.output(i);
        same &= o + t->bytes <= static_cast<size_t>(expected_end - expected_data) &&
                memcmp(t->data.raw, expected_data + o, t->bytes) == 0;
        o += t->bytes;
      }
      same &= o == static_cast<size_t>(expected_end - expected_data);
      put(same ? " outputs=golden" : " outputs=DIFFER");
    }
    put("\n");
  }
  return 0;
}
