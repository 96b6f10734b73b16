module @jit_transformer_bf16 attributes {jax.uses_shape_polymorphism = false, mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<8x128x768xbf16>, %arg1: tensor<768xf32>, %arg2: tensor<768xf32>, %arg3: tensor<768x2304xbf16>, %arg4: tensor<2304xf32>, %arg5: tensor<768x768xbf16>, %arg6: tensor<768xf32>, %arg7: tensor<768xf32>, %arg8: tensor<768xf32>, %arg9: tensor<768x3072xbf16>, %arg10: tensor<3072xf32>, %arg11: tensor<3072x768xbf16>, %arg12: tensor<768xf32>) -> (tensor<8x128x768xf32> {jax.result_info = "result"}) {
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
    %0 = stablehlo.convert %arg0 : (tensor<8x128x768xbf16>) -> tensor<8x128x768xf32>
    %1 = stablehlo.reduce(%0 init: %cst_9) applies stablehlo.add across dimensions = [2] : (tensor<8x128x768xf32>, tensor<f32>) -> tensor<8x128xf32>
    %2 = stablehlo.broadcast_in_dim %1, dims = [0, 1] : (tensor<8x128xf32>) -> tensor<8x128x1xf32>
    %3 = stablehlo.broadcast_in_dim %cst_8, dims = [] : (tensor<f32>) -> tensor<8x128x1xf32>
    %4 = stablehlo.divide %2, %3 : tensor<8x128x1xf32>
    %5 = stablehlo.broadcast_in_dim %4, dims = [0, 1, 2] : (tensor<8x128x1xf32>) -> tensor<8x128x768xf32>
    %6 = stablehlo.subtract %0, %5 : tensor<8x128x768xf32>
    %7 = stablehlo.multiply %6, %6 : tensor<8x128x768xf32>
    %8 = stablehlo.reduce(%7 init: %cst_9) applies stablehlo.add across dimensions = [2] : (tensor<8x128x768xf32>, tensor<f32>) -> tensor<8x128xf32>
    %9 = stablehlo.broadcast_in_dim %8, dims = [0, 1] : (tensor<8x128xf32>) -> tensor<8x128x1xf32>
    %10 = stablehlo.broadcast_in_dim %cst_8, dims = [] : (tensor<f32>) -> tensor<8x128x1xf32>
    %11 = stablehlo.divide %9, %10 : tensor<8x128x1xf32>
    %12 = stablehlo.broadcast_in_dim %4, dims = [0, 1, 2] : (tensor<8x128x1xf32>) -> tensor<8x128x768xf32>
    %13 = stablehlo.subtract %0, %12 : tensor<8x128x768xf32>
    %14 = stablehlo.broadcast_in_dim %cst_7, dims = [] : (tensor<f32>) -> tensor<8x128x1xf32>
    %15 = stablehlo.add %11, %14 : tensor<8x128x1xf32>
    %16 = stablehlo.rsqrt %15 : tensor<8x128x1xf32>
    %17 = stablehlo.broadcast_in_dim %16, dims = [0, 1, 2] : (tensor<8x128x1xf32>) -> tensor<8x128x768xf32>
    %18 = stablehlo.multiply %13, %17 : tensor<8x128x768xf32>
    %19 = stablehlo.broadcast_in_dim %arg1, dims = [2] : (tensor<768xf32>) -> tensor<1x1x768xf32>
    %20 = stablehlo.broadcast_in_dim %19, dims = [0, 1, 2] : (tensor<1x1x768xf32>) -> tensor<8x128x768xf32>
    %21 = stablehlo.multiply %18, %20 : tensor<8x128x768xf32>
    %22 = stablehlo.broadcast_in_dim %arg2, dims = [2] : (tensor<768xf32>) -> tensor<1x1x768xf32>
    %23 = stablehlo.broadcast_in_dim %22, dims = [0, 1, 2] : (tensor<1x1x768xf32>) -> tensor<8x128x768xf32>
    %24 = stablehlo.add %21, %23 : tensor<8x128x768xf32>
    %25 = stablehlo.convert %24 : (tensor<8x128x768xf32>) -> tensor<8x128x768xbf16>
    %26 = stablehlo.dot_general %25, %arg3, contracting_dims = [2] x [0] : (tensor<8x128x768xbf16>, tensor<768x2304xbf16>) -> tensor<8x128x2304xf32>
    %27 = stablehlo.broadcast_in_dim %cst_6, dims = [] : (tensor<f32>) -> tensor<8x128x2304xf32>
    %28 = stablehlo.multiply %26, %27 : tensor<8x128x2304xf32>
    %29 = stablehlo.broadcast_in_dim %arg4, dims = [2] : (tensor<2304xf32>) -> tensor<1x1x2304xf32>
    %30 = stablehlo.broadcast_in_dim %29, dims = [0, 1, 2] : (tensor<1x1x2304xf32>) -> tensor<8x128x2304xf32>
    %31 = stablehlo.add %28, %30 : tensor<8x128x2304xf32>
    %32 = stablehlo.reshape %31 : (tensor<8x128x2304xf32>) -> tensor<8x128x3x12x64xf32>
    %33 = stablehlo.slice %32 [0:8, 0:128, 0:1, 0:12, 0:64] : (tensor<8x128x3x12x64xf32>) -> tensor<8x128x1x12x64xf32>
    %34 = stablehlo.slice %32 [0:8, 0:128, 1:2, 0:12, 0:64] : (tensor<8x128x3x12x64xf32>) -> tensor<8x128x1x12x64xf32>
    %35 = stablehlo.slice %32 [0:8, 0:128, 2:3, 0:12, 0:64] : (tensor<8x128x3x12x64xf32>) -> tensor<8x128x1x12x64xf32>
    %36 = stablehlo.reshape %33 : (tensor<8x128x1x12x64xf32>) -> tensor<8x128x12x64xf32>
    %37 = stablehlo.convert %36 : (tensor<8x128x12x64xf32>) -> tensor<8x128x12x64xbf16>
    %38 = stablehlo.reshape %34 : (tensor<8x128x1x12x64xf32>) -> tensor<8x128x12x64xf32>
    %39 = stablehlo.convert %38 : (tensor<8x128x12x64xf32>) -> tensor<8x128x12x64xbf16>
    %40 = stablehlo.reshape %35 : (tensor<8x128x1x12x64xf32>) -> tensor<8x128x12x64xf32>
    %41 = stablehlo.convert %40 : (tensor<8x128x12x64xf32>) -> tensor<8x128x12x64xbf16>
    %42 = stablehlo.dot_general %37, %39, batching_dims = [0, 2] x [0, 2], contracting_dims = [3] x [3] : (tensor<8x128x12x64xbf16>, tensor<8x128x12x64xbf16>) -> tensor<8x12x128x128xf32>
    %43 = stablehlo.broadcast_in_dim %cst_5, dims = [] : (tensor<f32>) -> tensor<8x12x128x128xf32>
    %44 = stablehlo.multiply %42, %43 : tensor<8x12x128x128xf32>
    %45 = stablehlo.reduce(%44 init: %cst_4) applies stablehlo.maximum across dimensions = [3] : (tensor<8x12x128x128xf32>, tensor<f32>) -> tensor<8x12x128xf32>
    %46 = stablehlo.broadcast_in_dim %cst_4, dims = [] : (tensor<f32>) -> tensor<8x12x128xf32>
    %47 = stablehlo.maximum %46, %45 : tensor<8x12x128xf32>
    %48 = stablehlo.broadcast_in_dim %47, dims = [0, 1, 2] : (tensor<8x12x128xf32>) -> tensor<8x12x128x1xf32>
    %49 = stablehlo.broadcast_in_dim %48, dims = [0, 1, 2, 3] : (tensor<8x12x128x1xf32>) -> tensor<8x12x128x128xf32>
    %50 = stablehlo.subtract %44, %49 : tensor<8x12x128x128xf32>
    %51 = stablehlo.exponential %50 : tensor<8x12x128x128xf32>
    %52 = stablehlo.reduce(%51 init: %cst_9) applies stablehlo.add across dimensions = [3] : (tensor<8x12x128x128xf32>, tensor<f32>) -> tensor<8x12x128xf32>
    %53 = stablehlo.broadcast_in_dim %52, dims = [0, 1, 2] : (tensor<8x12x128xf32>) -> tensor<8x12x128x1xf32>
    %54 = stablehlo.broadcast_in_dim %53, dims = [0, 1, 2, 3] : (tensor<8x12x128x1xf32>) -> tensor<8x12x128x128xf32>
    %55 = stablehlo.divide %51, %54 : tensor<8x12x128x128xf32>
    %56 = stablehlo.convert %55 : (tensor<8x12x128x128xf32>) -> tensor<8x12x128x128xbf16>
    %57 = stablehlo.dot_general %41, %56, batching_dims = [0, 2] x [0, 1], contracting_dims = [1] x [3] : (tensor<8x128x12x64xbf16>, tensor<8x12x128x128xbf16>) -> tensor<8x12x64x128xf32>
    %58 = stablehlo.transpose %57, dims = [0, 3, 1, 2] : (tensor<8x12x64x128xf32>) -> tensor<8x128x12x64xf32>
    %59 = stablehlo.reshape %58 : (tensor<8x128x12x64xf32>) -> tensor<8x128x768xf32>
    %60 = stablehlo.convert %59 : (tensor<8x128x768xf32>) -> tensor<8x128x768xbf16>
    %61 = stablehlo.dot_general %60, %arg5, contracting_dims = [2] x [0] : (tensor<8x128x768xbf16>, tensor<768x768xbf16>) -> tensor<8x128x768xf32>
    %62 = stablehlo.broadcast_in_dim %cst_6, dims = [] : (tensor<f32>) -> tensor<8x128x768xf32>
    %63 = stablehlo.multiply %61, %62 : tensor<8x128x768xf32>
    %64 = stablehlo.broadcast_in_dim %arg6, dims = [2] : (tensor<768xf32>) -> tensor<1x1x768xf32>
    %65 = stablehlo.broadcast_in_dim %64, dims = [0, 1, 2] : (tensor<1x1x768xf32>) -> tensor<8x128x768xf32>
    %66 = stablehlo.add %63, %65 : tensor<8x128x768xf32>
    %67 = stablehlo.add %0, %66 : tensor<8x128x768xf32>
    %68 = stablehlo.reduce(%67 init: %cst_9) applies stablehlo.add across dimensions = [2] : (tensor<8x128x768xf32>, tensor<f32>) -> tensor<8x128xf32>
    %69 = stablehlo.broadcast_in_dim %68, dims = [0, 1] : (tensor<8x128xf32>) -> tensor<8x128x1xf32>
    %70 = stablehlo.broadcast_in_dim %cst_8, dims = [] : (tensor<f32>) -> tensor<8x128x1xf32>
    %71 = stablehlo.divide %69, %70 : tensor<8x128x1xf32>
    %72 = stablehlo.broadcast_in_dim %71, dims = [0, 1, 2] : (tensor<8x128x1xf32>) -> tensor<8x128x768xf32>
    %73 = stablehlo.subtract %67, %72 : tensor<8x128x768xf32>
    %74 = stablehlo.multiply %73, %73 : tensor<8x128x768xf32>
    %75 = stablehlo.reduce(%74 init: %cst_9) applies stablehlo.add across dimensions = [2] : (tensor<8x128x768xf32>, tensor<f32>) -> tensor<8x128xf32>
    %76 = stablehlo.broadcast_in_dim %75, dims = [0, 1] : (tensor<8x128xf32>) -> tensor<8x128x1xf32>
    %77 = stablehlo.broadcast_in_dim %cst_8, dims = [] : (tensor<f32>) -> tensor<8x128x1xf32>
    %78 = stablehlo.divide %76, %77 : tensor<8x128x1xf32>
    %79 = stablehlo.broadcast_in_dim %71, dims = [0, 1, 2] : (tensor<8x128x1xf32>) -> tensor<8x128x768xf32>
    %80 = stablehlo.subtract %67, %79 : tensor<8x128x768xf32>
    %81 = stablehlo.broadcast_in_dim %cst_7, dims = [] : (tensor<f32>) -> tensor<8x128x1xf32>
    %82 = stablehlo.add %78, %81 : tensor<8x128x1xf32>
    %83 = stablehlo.rsqrt %82 : tensor<8x128x1xf32>
    %84 = stablehlo.broadcast_in_dim %83, dims = [0, 1, 2] : (tensor<8x128x1xf32>) -> tensor<8x128x768xf32>
    %85 = stablehlo.multiply %80, %84 : tensor<8x128x768xf32>
    %86 = stablehlo.broadcast_in_dim %arg7, dims = [2] : (tensor<768xf32>) -> tensor<1x1x768xf32>
    %87 = stablehlo.broadcast_in_dim %86, dims = [0, 1, 2] : (tensor<1x1x768xf32>) -> tensor<8x128x768xf32>
    %88 = stablehlo.multiply %85, %87 : tensor<8x128x768xf32>
    %89 = stablehlo.broadcast_in_dim %arg8, dims = [2] : (tensor<768xf32>) -> tensor<1x1x768xf32>
    %90 = stablehlo.broadcast_in_dim %89, dims = [0, 1, 2] : (tensor<1x1x768xf32>) -> tensor<8x128x768xf32>
    %91 = stablehlo.add %88, %90 : tensor<8x128x768xf32>
    %92 = stablehlo.convert %91 : (tensor<8x128x768xf32>) -> tensor<8x128x768xbf16>
    %93 = stablehlo.dot_general %92, %arg9, contracting_dims = [2] x [0] : (tensor<8x128x768xbf16>, tensor<768x3072xbf16>) -> tensor<8x128x3072xf32>
    %94 = stablehlo.broadcast_in_dim %cst_6, dims = [] : (tensor<f32>) -> tensor<8x128x3072xf32>
    %95 = stablehlo.multiply %93, %94 : tensor<8x128x3072xf32>
    %96 = stablehlo.broadcast_in_dim %arg10, dims = [2] : (tensor<3072xf32>) -> tensor<1x1x3072xf32>
    %97 = stablehlo.broadcast_in_dim %96, dims = [0, 1, 2] : (tensor<1x1x3072xf32>) -> tensor<8x128x3072xf32>
    %98 = stablehlo.add %95, %97 : tensor<8x128x3072xf32>
    %99 = stablehlo.multiply %98, %98 : tensor<8x128x3072xf32>
    %100 = stablehlo.multiply %99, %98 : tensor<8x128x3072xf32>
    %101 = stablehlo.broadcast_in_dim %cst_3, dims = [] : (tensor<f32>) -> tensor<8x128x3072xf32>
    %102 = stablehlo.multiply %101, %100 : tensor<8x128x3072xf32>
    %103 = stablehlo.add %98, %102 : tensor<8x128x3072xf32>
    %104 = stablehlo.broadcast_in_dim %cst_2, dims = [] : (tensor<f32>) -> tensor<8x128x3072xf32>
    %105 = stablehlo.multiply %104, %103 : tensor<8x128x3072xf32>
    %106 = stablehlo.tanh %105 : tensor<8x128x3072xf32>
    %107 = stablehlo.broadcast_in_dim %cst_1, dims = [] : (tensor<f32>) -> tensor<8x128x3072xf32>
    %108 = stablehlo.add %107, %106 : tensor<8x128x3072xf32>
    %109 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<8x128x3072xf32>
    %110 = stablehlo.multiply %109, %108 : tensor<8x128x3072xf32>
    %111 = stablehlo.multiply %98, %110 : tensor<8x128x3072xf32>
    %112 = stablehlo.convert %111 : (tensor<8x128x3072xf32>) -> tensor<8x128x3072xbf16>
    %113 = stablehlo.dot_general %112, %arg11, contracting_dims = [2] x [0] : (tensor<8x128x3072xbf16>, tensor<3072x768xbf16>) -> tensor<8x128x768xf32>
    %114 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<8x128x768xf32>
    %115 = stablehlo.multiply %113, %114 : tensor<8x128x768xf32>
    %116 = stablehlo.broadcast_in_dim %arg12, dims = [2] : (tensor<768xf32>) -> tensor<1x1x768xf32>
    %117 = stablehlo.broadcast_in_dim %116, dims = [0, 1, 2] : (tensor<1x1x768xf32>) -> tensor<8x128x768xf32>
    %118 = stablehlo.add %115, %117 : tensor<8x128x768xf32>
    %119 = stablehlo.add %67, %118 : tensor<8x128x768xf32>
    return %119 : tensor<8x128x768xf32>
  }
}
