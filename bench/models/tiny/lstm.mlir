module @jit_lstm attributes {jax.uses_shape_polymorphism = false, mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<3x2x4xf32>, %arg1: tensor<4x16xf32>, %arg2: tensor<4x16xf32>, %arg3: tensor<16xf32>) -> (tensor<2x4xf32> {jax.result_info = "result"}) {
    %c = stablehlo.constant dense<1> : tensor<i32>
    %c_0 = stablehlo.constant dense<3> : tensor<i32>
    %c_1 = stablehlo.constant dense<0> : tensor<i32>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %cst_2 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [2] x [0] : (tensor<3x2x4xf32>, tensor<4x16xf32>) -> tensor<3x2x16xf32>
    %1 = stablehlo.broadcast_in_dim %cst_2, dims = [] : (tensor<f32>) -> tensor<3x2x16xf32>
    %2 = stablehlo.multiply %0, %1 : tensor<3x2x16xf32>
    %3 = stablehlo.broadcast_in_dim %arg3, dims = [2] : (tensor<16xf32>) -> tensor<1x1x16xf32>
    %4 = stablehlo.broadcast_in_dim %3, dims = [0, 1, 2] : (tensor<1x1x16xf32>) -> tensor<3x2x16xf32>
    %5 = stablehlo.add %2, %4 : tensor<3x2x16xf32>
    %6 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<2x4xf32>
    %7:6 = stablehlo.while(%iterArg = %5, %iterArg_3 = %arg2, %iterArg_4 = %c_1, %iterArg_5 = %c_1, %iterArg_6 = %6, %iterArg_7 = %6) : tensor<3x2x16xf32>, tensor<4x16xf32>, tensor<i32>, tensor<i32>, tensor<2x4xf32>, tensor<2x4xf32>
    cond {
      %8 = stablehlo.compare LT, %iterArg_4, %c_0, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %8 : tensor<i1>
    } do {
      %8:3 = func.call @closed_call(%iterArg, %iterArg_3, %iterArg_5, %iterArg_6, %iterArg_7) : (tensor<3x2x16xf32>, tensor<4x16xf32>, tensor<i32>, tensor<2x4xf32>, tensor<2x4xf32>) -> (tensor<i32>, tensor<2x4xf32>, tensor<2x4xf32>)
      %9 = stablehlo.add %iterArg_4, %c : tensor<i32>
      stablehlo.return %iterArg, %iterArg_3, %9, %8#0, %8#1, %8#2 : tensor<3x2x16xf32>, tensor<4x16xf32>, tensor<i32>, tensor<i32>, tensor<2x4xf32>, tensor<2x4xf32>
    }
    return %7#4 : tensor<2x4xf32>
  }
  func.func private @closed_call(%arg0: tensor<3x2x16xf32>, %arg1: tensor<4x16xf32>, %arg2: tensor<i32>, %arg3: tensor<2x4xf32>, %arg4: tensor<2x4xf32>) -> (tensor<i32>, tensor<2x4xf32>, tensor<2x4xf32>) {
    %cst = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %cst_0 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %c = stablehlo.constant dense<1> : tensor<i32>
    %0 = stablehlo.add %arg2, %c : tensor<i32>
    %1 = call @dynamic_index_in_dim(%arg0, %arg2) : (tensor<3x2x16xf32>, tensor<i32>) -> tensor<2x16xf32>
    %2 = stablehlo.dot_general %arg3, %arg1, contracting_dims = [1] x [0] : (tensor<2x4xf32>, tensor<4x16xf32>) -> tensor<2x16xf32>
    %3 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<2x16xf32>
    %4 = stablehlo.multiply %2, %3 : tensor<2x16xf32>
    %5 = stablehlo.add %1, %4 : tensor<2x16xf32>
    %6 = stablehlo.slice %5 [0:2, 0:4] : (tensor<2x16xf32>) -> tensor<2x4xf32>
    %7 = stablehlo.slice %5 [0:2, 4:8] : (tensor<2x16xf32>) -> tensor<2x4xf32>
    %8 = stablehlo.slice %5 [0:2, 8:12] : (tensor<2x16xf32>) -> tensor<2x4xf32>
    %9 = stablehlo.slice %5 [0:2, 12:16] : (tensor<2x16xf32>) -> tensor<2x4xf32>
    %10 = stablehlo.negate %7 : tensor<2x4xf32>
    %11 = stablehlo.exponential %10 : tensor<2x4xf32>
    %12 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<2x4xf32>
    %13 = stablehlo.add %12, %11 : tensor<2x4xf32>
    %14 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<2x4xf32>
    %15 = stablehlo.divide %14, %13 : tensor<2x4xf32>
    %16 = stablehlo.multiply %15, %arg4 : tensor<2x4xf32>
    %17 = stablehlo.negate %6 : tensor<2x4xf32>
    %18 = stablehlo.exponential %17 : tensor<2x4xf32>
    %19 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<2x4xf32>
    %20 = stablehlo.add %19, %18 : tensor<2x4xf32>
    %21 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<2x4xf32>
    %22 = stablehlo.divide %21, %20 : tensor<2x4xf32>
    %23 = stablehlo.tanh %8 : tensor<2x4xf32>
    %24 = stablehlo.multiply %22, %23 : tensor<2x4xf32>
    %25 = stablehlo.add %16, %24 : tensor<2x4xf32>
    %26 = stablehlo.negate %9 : tensor<2x4xf32>
    %27 = stablehlo.exponential %26 : tensor<2x4xf32>
    %28 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<2x4xf32>
    %29 = stablehlo.add %28, %27 : tensor<2x4xf32>
    %30 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<2x4xf32>
    %31 = stablehlo.divide %30, %29 : tensor<2x4xf32>
    %32 = stablehlo.tanh %25 : tensor<2x4xf32>
    %33 = stablehlo.multiply %31, %32 : tensor<2x4xf32>
    return %0, %33, %25 : tensor<i32>, tensor<2x4xf32>, tensor<2x4xf32>
  }
  func.func private @dynamic_index_in_dim(%arg0: tensor<3x2x16xf32>, %arg1: tensor<i32>) -> tensor<2x16xf32> {
    %c = stablehlo.constant dense<3> : tensor<i32>
    %c_0 = stablehlo.constant dense<0> : tensor<i32>
    %0 = stablehlo.compare LT, %arg1, %c_0, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %1 = stablehlo.convert %arg1 : tensor<i32>
    %2 = stablehlo.add %1, %c : tensor<i32>
    %3 = stablehlo.select %0, %2, %arg1 : tensor<i1>, tensor<i32>
    %4 = stablehlo.dynamic_slice %arg0, %3, %c_0, %c_0, sizes = [1, 2, 16] : (tensor<3x2x16xf32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x2x16xf32>
    %5 = stablehlo.reshape %4 : (tensor<1x2x16xf32>) -> tensor<2x16xf32>
    return %5 : tensor<2x16xf32>
  }
}
