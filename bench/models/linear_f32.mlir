module @jit_linear_f32 attributes {jax.uses_shape_polymorphism = false, mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<64x1024xf32>, %arg1: tensor<1024x4096xf32>) -> (tensor<64x4096xf32> {jax.result_info = "result"}) {
    %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0] : (tensor<64x1024xf32>, tensor<1024x4096xf32>) -> tensor<64x4096xf32>
    return %0 : tensor<64x4096xf32>
  }
}
