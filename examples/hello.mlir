// A small program: elementwise math and a transpose.
// Run it with `shlo run examples/hello.mlir --args "[...]"` (see README.md).
func.func @main(%x: tensor<3xf32>, %y: tensor<3xf32>) -> (tensor<3xf32>, tensor<3x2xf32>) {
  %sum = stablehlo.add %x, %y : tensor<3xf32>
  %prod = stablehlo.multiply %sum, %sum : tensor<3xf32>
  %a = stablehlo.reshape %x : (tensor<3xf32>) -> tensor<1x3xf32>
  %b = stablehlo.reshape %y : (tensor<3xf32>) -> tensor<1x3xf32>
  %ab = stablehlo.concatenate %a, %b, dim = 0 : (tensor<1x3xf32>, tensor<1x3xf32>) -> tensor<2x3xf32>
  %t = stablehlo.transpose %ab, dims = [1, 0] : (tensor<2x3xf32>) -> tensor<3x2xf32>
  func.return %prod, %t : tensor<3xf32>, tensor<3x2xf32>
}
