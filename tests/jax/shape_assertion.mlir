// A static program with JAX's shape_assertion: it holds for an argument
// of 3 and fails for any other with JAX's message, {0} and {1} filled in.
func.func @main(%arg0: tensor<i32>) -> tensor<i32> {
  %c = stablehlo.constant dense<3> : tensor<i32>
  %p = stablehlo.compare EQ, %arg0, %c, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
  stablehlo.custom_call @shape_assertion(%p, %arg0, %c) {error_message = "Input shapes do not match the polymorphic shapes specification. Expected value == {1} for dimension variable 'b'; obtained 'b' = {0}.", has_side_effect = true} : (tensor<i1>, tensor<i32>, tensor<i32>) -> ()
  %r = stablehlo.add %arg0, %arg0 : tensor<i32>
  return %r : tensor<i32>
}
