module @jit_int8_linear attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<2x8xf32>, %arg1: tensor<8x4x!quant.uniform<i8:f32:1, {0.0078125, 0.009765625, 0.01171875, 0.013671875}>>) -> (tensor<2x4xf32>) {
    %0 = stablehlo.uniform_quantize %arg0 : (tensor<2x8xf32>) -> tensor<2x8x!quant.uniform<i8:f32, 0.0078125>>
    %1 = stablehlo.dot_general %0, %arg1, contracting_dims = [1] x [0] : (tensor<2x8x!quant.uniform<i8:f32, 0.0078125>>, tensor<8x4x!quant.uniform<i8:f32:1, {0.0078125, 0.009765625, 0.01171875, 0.013671875}>>) -> tensor<2x4x!quant.uniform<i32:f32:1, {6.103515625e-05, 7.62939453125e-05, 9.1552734375e-05, 0.0001068115234375}>>
    %2 = stablehlo.uniform_dequantize %1 : (tensor<2x4x!quant.uniform<i32:f32:1, {6.103515625e-05, 7.62939453125e-05, 9.1552734375e-05, 0.0001068115234375}>>) -> tensor<2x4xf32>
    return %2 : tensor<2x4xf32>
  }
}
