// Process (0, 0) reaches an all_reduce at once; process (1, 0) first waits
// on a channel that nothing sends on, so it never gets there.  Under
// `mpirun -n 2` the processes run on ranks 0 and 1: killing rank 1 leaves
// rank 0 waiting mid-collective, and it must end with a runtime error.
// Process (0, 0) prints its operand first: the test kills rank 1 once that
// line is out, when rank 0 is surely in the grid.
module @lost_rank {
  func.func @reduce(%x: tensor<2xf32>) -> tensor<2xf32> {
    interpreter.print %x : tensor<2xf32>
    %s = "stablehlo.all_reduce"(%x) ({
      ^bb0(%a: tensor<f32>, %b: tensor<f32>):
        %c = stablehlo.add %a, %b : tensor<f32>
        stablehlo.return %c : tensor<f32>
    }) {replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>} : (tensor<2xf32>) -> tensor<2xf32>
    return %s : tensor<2xf32>
  }
  func.func @wait_then_reduce(%x: tensor<2xf32>) -> tensor<2xf32> {
    %t = stablehlo.after_all : !stablehlo.token
    %v, %t2 = "stablehlo.recv"(%t) {
      channel_handle = #stablehlo.channel_handle<handle = 7, type = 3>,
      is_host_transfer = true
    } : (!stablehlo.token) -> (tensor<2xf32>, !stablehlo.token)
    %y = stablehlo.add %x, %v : tensor<2xf32>
    %s = func.call @reduce(%y) : (tensor<2xf32>) -> tensor<2xf32>
    return %s : tensor<2xf32>
  }
  func.func @main() -> (tensor<2xf32>, tensor<2xf32>) {
    %x = stablehlo.constant dense<[1.0, 2.0]> : tensor<2xf32>
    %r:2 = "interpreter.run_parallel"(%x, %x) {
      programs = [[@reduce], [@wait_then_reduce]]
    } : (tensor<2xf32>, tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>)
    return %r#0, %r#1 : tensor<2xf32>, tensor<2xf32>
  }
}
