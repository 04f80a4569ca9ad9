// The model, TFLM's golden input and output, embedded as they are.
  .section .rodata.blobs, "a"
  .balign 16
  .global model_data, model_end, input_data, input_end, expected_data, expected_end
model_data: .incbin MODEL_PATH
model_end:
  .balign 16
input_data: .incbin INPUT_PATH
input_end:
  .balign 4
expected_data: .incbin EXPECTED_PATH
expected_end:
