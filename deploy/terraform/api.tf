# The API function's URL (docs/aws.md, "The API function"). The function,
# its role and its log group are the module's like every other's
# (local.functions holds "api" when enable_api_function is set); this is
# what only it has: a function URL. Its auth is AWS_IAM, so Lambda refuses
# a request that is not SigV4-signed by a principal allowed
# lambda:InvokeFunctionUrl on the function before any invocation (and the
# function refuses a request whose context names no IAM caller, so a URL
# changed to NONE by hand stays closed). Buffered: the API's event stream
# is answered 501 there.
resource "aws_lambda_function_url" "api" {
  count              = var.enable_api_function ? 1 : 0
  function_name      = aws_lambda_function.fn["api"].function_name
  authorization_type = "AWS_IAM"
  invoke_mode        = "BUFFERED"
}
