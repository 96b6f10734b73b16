module @jit_bottleneck attributes {jax.uses_shape_polymorphism = false, mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<1x6x6x8xf32>, %arg1: tensor<1x1x8x4xf32>, %arg2: tensor<4xf32>, %arg3: tensor<3x3x4x4xf32>, %arg4: tensor<4xf32>, %arg5: tensor<1x1x4x8xf32>, %arg6: tensor<8xf32>) -> (tensor<1x6x6x8xf32> {jax.result_info = "result"}) {
    %cst = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %cst_0 = stablehlo.constant dense<0.166666672> : tensor<f32>
    %cst_1 = stablehlo.constant dense<0.353553385> : tensor<f32>
    %0 = stablehlo.convolution(%arg0, %arg1) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x6x6x8xf32>, tensor<1x1x8x4xf32>) -> tensor<1x6x6x4xf32>
    %1 = stablehlo.broadcast_in_dim %cst_1, dims = [] : (tensor<f32>) -> tensor<1x6x6x4xf32>
    %2 = stablehlo.multiply %0, %1 : tensor<1x6x6x4xf32>
    %3 = stablehlo.broadcast_in_dim %arg2, dims = [3] : (tensor<4xf32>) -> tensor<1x1x1x4xf32>
    %4 = stablehlo.broadcast_in_dim %3, dims = [0, 1, 2, 3] : (tensor<1x1x1x4xf32>) -> tensor<1x6x6x4xf32>
    %5 = stablehlo.add %2, %4 : tensor<1x6x6x4xf32>
    %6 = call @relu(%5) : (tensor<1x6x6x4xf32>) -> tensor<1x6x6x4xf32>
    %7 = stablehlo.convolution(%6, %arg3) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {pad = [[1, 1], [1, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x6x6x4xf32>, tensor<3x3x4x4xf32>) -> tensor<1x6x6x4xf32>
    %8 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<1x6x6x4xf32>
    %9 = stablehlo.multiply %7, %8 : tensor<1x6x6x4xf32>
    %10 = stablehlo.broadcast_in_dim %arg4, dims = [3] : (tensor<4xf32>) -> tensor<1x1x1x4xf32>
    %11 = stablehlo.broadcast_in_dim %10, dims = [0, 1, 2, 3] : (tensor<1x1x1x4xf32>) -> tensor<1x6x6x4xf32>
    %12 = stablehlo.add %9, %11 : tensor<1x6x6x4xf32>
    %13 = call @relu(%12) : (tensor<1x6x6x4xf32>) -> tensor<1x6x6x4xf32>
    %14 = stablehlo.convolution(%13, %arg5) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x6x6x4xf32>, tensor<1x1x4x8xf32>) -> tensor<1x6x6x8xf32>
    %15 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<1x6x6x8xf32>
    %16 = stablehlo.multiply %14, %15 : tensor<1x6x6x8xf32>
    %17 = stablehlo.broadcast_in_dim %arg6, dims = [3] : (tensor<8xf32>) -> tensor<1x1x1x8xf32>
    %18 = stablehlo.broadcast_in_dim %17, dims = [0, 1, 2, 3] : (tensor<1x1x1x8xf32>) -> tensor<1x6x6x8xf32>
    %19 = stablehlo.add %16, %18 : tensor<1x6x6x8xf32>
    %20 = stablehlo.add %arg0, %19 : tensor<1x6x6x8xf32>
    %21 = call @relu_0(%20) : (tensor<1x6x6x8xf32>) -> tensor<1x6x6x8xf32>
    return %21 : tensor<1x6x6x8xf32>
  }
  func.func private @relu(%arg0: tensor<1x6x6x4xf32>) -> tensor<1x6x6x4xf32> {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<1x6x6x4xf32>
    %1 = stablehlo.maximum %arg0, %0 : tensor<1x6x6x4xf32>
    return %1 : tensor<1x6x6x4xf32>
  }
  func.func private @relu_0(%arg0: tensor<1x6x6x8xf32>) -> tensor<1x6x6x8xf32> {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<1x6x6x8xf32>
    %1 = stablehlo.maximum %arg0, %0 : tensor<1x6x6x8xf32>
    return %1 : tensor<1x6x6x8xf32>
  }
}
