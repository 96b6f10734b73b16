// Process (1, 0) fails (it is in none of its all_reduce's replica_groups)
// while process (0, 0) waits for it in another all_reduce.  Across MPI
// ranks the failure must reach rank 0, stop its waiting process and come
// out as the same error as in one process.
module @remote_failure {
  func.func @wait(%x: tensor<2xi32>) -> tensor<2xi32> {
    %s = "stablehlo.all_reduce"(%x) ({
      ^bb0(%a: tensor<i32>, %b: tensor<i32>):
        %c = stablehlo.add %a, %b : tensor<i32>
        stablehlo.return %c : tensor<i32>
    }) {replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>} : (tensor<2xi32>) -> tensor<2xi32>
    return %s : tensor<2xi32>
  }
  func.func @fail(%x: tensor<2xi32>) -> tensor<2xi32> {
    %s = "stablehlo.all_reduce"(%x) ({
      ^bb0(%a: tensor<i32>, %b: tensor<i32>):
        %c = stablehlo.add %a, %b : tensor<i32>
        stablehlo.return %c : tensor<i32>
    }) {replica_groups = dense<[[0]]> : tensor<1x1xi64>} : (tensor<2xi32>) -> tensor<2xi32>
    return %s : tensor<2xi32>
  }
  func.func @main() -> (tensor<2xi32>, tensor<2xi32>) {
    %x = stablehlo.constant dense<[1, 2]> : tensor<2xi32>
    %r:2 = "interpreter.run_parallel"(%x, %x) {
      programs = [[@wait], [@fail]]
    } : (tensor<2xi32>, tensor<2xi32>) -> (tensor<2xi32>, tensor<2xi32>)
    return %r#0, %r#1 : tensor<2xi32>, tensor<2xi32>
  }
}
