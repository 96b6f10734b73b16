module @jit_transformer attributes {jax.uses_shape_polymorphism = false, mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<8x128x768xf32>, %arg1: tensor<768xf32>, %arg2: tensor<768xf32>, %arg3: tensor<768x2304xf32>, %arg4: tensor<2304xf32>, %arg5: tensor<768x768xf32>, %arg6: tensor<768xf32>, %arg7: tensor<768xf32>, %arg8: tensor<768xf32>, %arg9: tensor<768x3072xf32>, %arg10: tensor<3072xf32>, %arg11: tensor<3072x768xf32>, %arg12: tensor<768xf32>) -> (tensor<8x128x768xf32> {jax.result_info = "result"}) {
    %cst = stablehlo.constant dense<0.0180421956> : tensor<f32>
    %cst_0 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %cst_1 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %cst_2 = stablehlo.constant dense<0.797884583> : tensor<f32>
    %cst_3 = stablehlo.constant dense<4.471500e-02> : tensor<f32>
    %cst_4 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %cst_5 = stablehlo.constant dense<1.250000e-01> : tensor<f32>
    %cst_6 = stablehlo.constant dense<0.0360843912> : tensor<f32>
    %cst_7 = stablehlo.constant dense<9.99999974E-6> : tensor<f32>
    %cst_8 = stablehlo.constant dense<7.680000e+02> : tensor<f32>
    %cst_9 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.reduce(%arg0 init: %cst_9) applies stablehlo.add across dimensions = [2] : (tensor<8x128x768xf32>, tensor<f32>) -> tensor<8x128xf32>
    %1 = stablehlo.broadcast_in_dim %0, dims = [0, 1] : (tensor<8x128xf32>) -> tensor<8x128x1xf32>
    %2 = stablehlo.broadcast_in_dim %cst_8, dims = [] : (tensor<f32>) -> tensor<8x128x1xf32>
    %3 = stablehlo.divide %1, %2 : tensor<8x128x1xf32>
    %4 = stablehlo.broadcast_in_dim %3, dims = [0, 1, 2] : (tensor<8x128x1xf32>) -> tensor<8x128x768xf32>
    %5 = stablehlo.subtract %arg0, %4 : tensor<8x128x768xf32>
    %6 = stablehlo.multiply %5, %5 : tensor<8x128x768xf32>
    %7 = stablehlo.reduce(%6 init: %cst_9) applies stablehlo.add across dimensions = [2] : (tensor<8x128x768xf32>, tensor<f32>) -> tensor<8x128xf32>
    %8 = stablehlo.broadcast_in_dim %7, dims = [0, 1] : (tensor<8x128xf32>) -> tensor<8x128x1xf32>
    %9 = stablehlo.broadcast_in_dim %cst_8, dims = [] : (tensor<f32>) -> tensor<8x128x1xf32>
    %10 = stablehlo.divide %8, %9 : tensor<8x128x1xf32>
    %11 = stablehlo.broadcast_in_dim %3, dims = [0, 1, 2] : (tensor<8x128x1xf32>) -> tensor<8x128x768xf32>
    %12 = stablehlo.subtract %arg0, %11 : tensor<8x128x768xf32>
    %13 = stablehlo.broadcast_in_dim %cst_7, dims = [] : (tensor<f32>) -> tensor<8x128x1xf32>
    %14 = stablehlo.add %10, %13 : tensor<8x128x1xf32>
    %15 = stablehlo.rsqrt %14 : tensor<8x128x1xf32>
    %16 = stablehlo.broadcast_in_dim %15, dims = [0, 1, 2] : (tensor<8x128x1xf32>) -> tensor<8x128x768xf32>
    %17 = stablehlo.multiply %12, %16 : tensor<8x128x768xf32>
    %18 = stablehlo.broadcast_in_dim %arg1, dims = [2] : (tensor<768xf32>) -> tensor<1x1x768xf32>
    %19 = stablehlo.broadcast_in_dim %18, dims = [0, 1, 2] : (tensor<1x1x768xf32>) -> tensor<8x128x768xf32>
    %20 = stablehlo.multiply %17, %19 : tensor<8x128x768xf32>
    %21 = stablehlo.broadcast_in_dim %arg2, dims = [2] : (tensor<768xf32>) -> tensor<1x1x768xf32>
    %22 = stablehlo.broadcast_in_dim %21, dims = [0, 1, 2] : (tensor<1x1x768xf32>) -> tensor<8x128x768xf32>
    %23 = stablehlo.add %20, %22 : tensor<8x128x768xf32>
    %24 = stablehlo.dot_general %23, %arg3, contracting_dims = [2] x [0] : (tensor<8x128x768xf32>, tensor<768x2304xf32>) -> tensor<8x128x2304xf32>
    %25 = stablehlo.broadcast_in_dim %cst_6, dims = [] : (tensor<f32>) -> tensor<8x128x2304xf32>
    %26 = stablehlo.multiply %24, %25 : tensor<8x128x2304xf32>
    %27 = stablehlo.broadcast_in_dim %arg4, dims = [2] : (tensor<2304xf32>) -> tensor<1x1x2304xf32>
    %28 = stablehlo.broadcast_in_dim %27, dims = [0, 1, 2] : (tensor<1x1x2304xf32>) -> tensor<8x128x2304xf32>
    %29 = stablehlo.add %26, %28 : tensor<8x128x2304xf32>
    %30 = stablehlo.reshape %29 : (tensor<8x128x2304xf32>) -> tensor<8x128x3x12x64xf32>
    %31 = stablehlo.slice %30 [0:8, 0:128, 0:1, 0:12, 0:64] : (tensor<8x128x3x12x64xf32>) -> tensor<8x128x1x12x64xf32>
    %32 = stablehlo.slice %30 [0:8, 0:128, 1:2, 0:12, 0:64] : (tensor<8x128x3x12x64xf32>) -> tensor<8x128x1x12x64xf32>
    %33 = stablehlo.slice %30 [0:8, 0:128, 2:3, 0:12, 0:64] : (tensor<8x128x3x12x64xf32>) -> tensor<8x128x1x12x64xf32>
    %34 = stablehlo.reshape %31 : (tensor<8x128x1x12x64xf32>) -> tensor<8x128x12x64xf32>
    %35 = stablehlo.reshape %32 : (tensor<8x128x1x12x64xf32>) -> tensor<8x128x12x64xf32>
    %36 = stablehlo.reshape %33 : (tensor<8x128x1x12x64xf32>) -> tensor<8x128x12x64xf32>
    %37 = stablehlo.dot_general %34, %35, batching_dims = [0, 2] x [0, 2], contracting_dims = [3] x [3] : (tensor<8x128x12x64xf32>, tensor<8x128x12x64xf32>) -> tensor<8x12x128x128xf32>
    %38 = stablehlo.broadcast_in_dim %cst_5, dims = [] : (tensor<f32>) -> tensor<8x12x128x128xf32>
    %39 = stablehlo.multiply %37, %38 : tensor<8x12x128x128xf32>
    %40 = stablehlo.reduce(%39 init: %cst_4) applies stablehlo.maximum across dimensions = [3] : (tensor<8x12x128x128xf32>, tensor<f32>) -> tensor<8x12x128xf32>
    %41 = stablehlo.broadcast_in_dim %cst_4, dims = [] : (tensor<f32>) -> tensor<8x12x128xf32>
    %42 = stablehlo.maximum %41, %40 : tensor<8x12x128xf32>
    %43 = stablehlo.broadcast_in_dim %42, dims = [0, 1, 2] : (tensor<8x12x128xf32>) -> tensor<8x12x128x1xf32>
    %44 = stablehlo.broadcast_in_dim %43, dims = [0, 1, 2, 3] : (tensor<8x12x128x1xf32>) -> tensor<8x12x128x128xf32>
    %45 = stablehlo.subtract %39, %44 : tensor<8x12x128x128xf32>
    %46 = stablehlo.exponential %45 : tensor<8x12x128x128xf32>
    %47 = stablehlo.reduce(%46 init: %cst_9) applies stablehlo.add across dimensions = [3] : (tensor<8x12x128x128xf32>, tensor<f32>) -> tensor<8x12x128xf32>
    %48 = stablehlo.broadcast_in_dim %47, dims = [0, 1, 2] : (tensor<8x12x128xf32>) -> tensor<8x12x128x1xf32>
    %49 = stablehlo.broadcast_in_dim %48, dims = [0, 1, 2, 3] : (tensor<8x12x128x1xf32>) -> tensor<8x12x128x128xf32>
    %50 = stablehlo.divide %46, %49 : tensor<8x12x128x128xf32>
    %51 = stablehlo.dot_general %36, %50, batching_dims = [0, 2] x [0, 1], contracting_dims = [1] x [3] : (tensor<8x128x12x64xf32>, tensor<8x12x128x128xf32>) -> tensor<8x12x64x128xf32>
    %52 = stablehlo.transpose %51, dims = [0, 3, 1, 2] : (tensor<8x12x64x128xf32>) -> tensor<8x128x12x64xf32>
    %53 = stablehlo.reshape %52 : (tensor<8x128x12x64xf32>) -> tensor<8x128x768xf32>
    %54 = stablehlo.dot_general %53, %arg5, contracting_dims = [2] x [0] : (tensor<8x128x768xf32>, tensor<768x768xf32>) -> tensor<8x128x768xf32>
    %55 = stablehlo.broadcast_in_dim %cst_6, dims = [] : (tensor<f32>) -> tensor<8x128x768xf32>
    %56 = stablehlo.multiply %54, %55 : tensor<8x128x768xf32>
    %57 = stablehlo.broadcast_in_dim %arg6, dims = [2] : (tensor<768xf32>) -> tensor<1x1x768xf32>
    %58 = stablehlo.broadcast_in_dim %57, dims = [0, 1, 2] : (tensor<1x1x768xf32>) -> tensor<8x128x768xf32>
    %59 = stablehlo.add %56, %58 : tensor<8x128x768xf32>
    %60 = stablehlo.add %arg0, %59 : tensor<8x128x768xf32>
    %61 = stablehlo.reduce(%60 init: %cst_9) applies stablehlo.add across dimensions = [2] : (tensor<8x128x768xf32>, tensor<f32>) -> tensor<8x128xf32>
    %62 = stablehlo.broadcast_in_dim %61, dims = [0, 1] : (tensor<8x128xf32>) -> tensor<8x128x1xf32>
    %63 = stablehlo.broadcast_in_dim %cst_8, dims = [] : (tensor<f32>) -> tensor<8x128x1xf32>
    %64 = stablehlo.divide %62, %63 : tensor<8x128x1xf32>
    %65 = stablehlo.broadcast_in_dim %64, dims = [0, 1, 2] : (tensor<8x128x1xf32>) -> tensor<8x128x768xf32>
    %66 = stablehlo.subtract %60, %65 : tensor<8x128x768xf32>
    %67 = stablehlo.multiply %66, %66 : tensor<8x128x768xf32>
    %68 = stablehlo.reduce(%67 init: %cst_9) applies stablehlo.add across dimensions = [2] : (tensor<8x128x768xf32>, tensor<f32>) -> tensor<8x128xf32>
    %69 = stablehlo.broadcast_in_dim %68, dims = [0, 1] : (tensor<8x128xf32>) -> tensor<8x128x1xf32>
    %70 = stablehlo.broadcast_in_dim %cst_8, dims = [] : (tensor<f32>) -> tensor<8x128x1xf32>
    %71 = stablehlo.divide %69, %70 : tensor<8x128x1xf32>
    %72 = stablehlo.broadcast_in_dim %64, dims = [0, 1, 2] : (tensor<8x128x1xf32>) -> tensor<8x128x768xf32>
    %73 = stablehlo.subtract %60, %72 : tensor<8x128x768xf32>
    %74 = stablehlo.broadcast_in_dim %cst_7, dims = [] : (tensor<f32>) -> tensor<8x128x1xf32>
    %75 = stablehlo.add %71, %74 : tensor<8x128x1xf32>
    %76 = stablehlo.rsqrt %75 : tensor<8x128x1xf32>
    %77 = stablehlo.broadcast_in_dim %76, dims = [0, 1, 2] : (tensor<8x128x1xf32>) -> tensor<8x128x768xf32>
    %78 = stablehlo.multiply %73, %77 : tensor<8x128x768xf32>
    %79 = stablehlo.broadcast_in_dim %arg7, dims = [2] : (tensor<768xf32>) -> tensor<1x1x768xf32>
    %80 = stablehlo.broadcast_in_dim %79, dims = [0, 1, 2] : (tensor<1x1x768xf32>) -> tensor<8x128x768xf32>
    %81 = stablehlo.multiply %78, %80 : tensor<8x128x768xf32>
    %82 = stablehlo.broadcast_in_dim %arg8, dims = [2] : (tensor<768xf32>) -> tensor<1x1x768xf32>
    %83 = stablehlo.broadcast_in_dim %82, dims = [0, 1, 2] : (tensor<1x1x768xf32>) -> tensor<8x128x768xf32>
    %84 = stablehlo.add %81, %83 : tensor<8x128x768xf32>
    %85 = stablehlo.dot_general %84, %arg9, contracting_dims = [2] x [0] : (tensor<8x128x768xf32>, tensor<768x3072xf32>) -> tensor<8x128x3072xf32>
    %86 = stablehlo.broadcast_in_dim %cst_6, dims = [] : (tensor<f32>) -> tensor<8x128x3072xf32>
    %87 = stablehlo.multiply %85, %86 : tensor<8x128x3072xf32>
    %88 = stablehlo.broadcast_in_dim %arg10, dims = [2] : (tensor<3072xf32>) -> tensor<1x1x3072xf32>
    %89 = stablehlo.broadcast_in_dim %88, dims = [0, 1, 2] : (tensor<1x1x3072xf32>) -> tensor<8x128x3072xf32>
    %90 = stablehlo.add %87, %89 : tensor<8x128x3072xf32>
    %91 = stablehlo.multiply %90, %90 : tensor<8x128x3072xf32>
    %92 = stablehlo.multiply %91, %90 : tensor<8x128x3072xf32>
    %93 = stablehlo.broadcast_in_dim %cst_3, dims = [] : (tensor<f32>) -> tensor<8x128x3072xf32>
    %94 = stablehlo.multiply %93, %92 : tensor<8x128x3072xf32>
    %95 = stablehlo.add %90, %94 : tensor<8x128x3072xf32>
    %96 = stablehlo.broadcast_in_dim %cst_2, dims = [] : (tensor<f32>) -> tensor<8x128x3072xf32>
    %97 = stablehlo.multiply %96, %95 : tensor<8x128x3072xf32>
    %98 = stablehlo.tanh %97 : tensor<8x128x3072xf32>
    %99 = stablehlo.broadcast_in_dim %cst_1, dims = [] : (tensor<f32>) -> tensor<8x128x3072xf32>
    %100 = stablehlo.add %99, %98 : tensor<8x128x3072xf32>
    %101 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<8x128x3072xf32>
    %102 = stablehlo.multiply %101, %100 : tensor<8x128x3072xf32>
    %103 = stablehlo.multiply %90, %102 : tensor<8x128x3072xf32>
    %104 = stablehlo.dot_general %103, %arg11, contracting_dims = [2] x [0] : (tensor<8x128x3072xf32>, tensor<3072x768xf32>) -> tensor<8x128x768xf32>
    %105 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<8x128x768xf32>
    %106 = stablehlo.multiply %104, %105 : tensor<8x128x768xf32>
    %107 = stablehlo.broadcast_in_dim %arg12, dims = [2] : (tensor<768xf32>) -> tensor<1x1x768xf32>
    %108 = stablehlo.broadcast_in_dim %107, dims = [0, 1, 2] : (tensor<1x1x768xf32>) -> tensor<8x128x768xf32>
    %109 = stablehlo.add %106, %108 : tensor<8x128x768xf32>
    %110 = stablehlo.add %60, %109 : tensor<8x128x768xf32>
    return %110 : tensor<8x128x768xf32>
  }
}
